/** One page of a list: the items and the size of the whole filtered set (docs/api.md#paging). */
export interface Page<T> {
  readonly data: ReadonlyArray<T>
  readonly total_count: number
}

/** Paging parameters every list takes. */
export interface PageParams {
  /** 1-based; default 1. */
  readonly page?: number | undefined
  /** 1–100; default 10 for one page, 100 when iterating. */
  readonly page_size?: number | undefined
  /** One of the list's order fields; without it lists are newest first. */
  readonly order_by?: string | undefined
  readonly ascending?: boolean | undefined
}

/** The largest page the platform serves. */
const MAX_PAGE_SIZE = 100

/**
 * A list call: `await` it for one page, or iterate it with `for await` for every item across pages
 * (pages of 100 from `page`, stopping at the last one).
 */
export class PageList<T> implements PromiseLike<Page<T>>, AsyncIterable<T> {
  constructor(
    private readonly fetchPage: (params: PageParams) => Promise<Page<T>>,
    private readonly params: PageParams
  ) {}

  // A list is awaitable for its first page on purpose (`await client.cards.list()`), and iterable for all.
  // biome-ignore lint/suspicious/noThenProperty: the thenable is the API
  then<A = Page<T>, B = never>(
    onFulfilled?: ((page: Page<T>) => A | PromiseLike<A>) | null,
    onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null
  ): Promise<A | B> {
    return this.fetchPage(this.params).then(onFulfilled, onRejected)
  }

  catch<B = never>(onRejected?: ((reason: unknown) => B | PromiseLike<B>) | null): Promise<Page<T> | B> {
    return this.fetchPage(this.params).catch(onRejected)
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    const size = Math.min(MAX_PAGE_SIZE, Math.max(1, Math.trunc(this.params.page_size ?? MAX_PAGE_SIZE)))
    for (let page = Math.max(1, Math.trunc(this.params.page ?? 1)); ; page++) {
      const result = await this.fetchPage({ ...this.params, page, page_size: size })
      yield* result.data
      if (result.data.length < size || page * size >= result.total_count) return
    }
  }

  /** Every item across pages, as one array (mind large lists). */
  async toArray(): Promise<Array<T>> {
    const items: Array<T> = []
    for await (const item of this) items.push(item)
    return items
  }
}
