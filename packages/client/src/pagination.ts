/** One page of a list: the items, the size of the whole filtered set and whether more follow (docs/api.md#paging). */
export interface Page<T> {
  /** One page of the list, in its order. */
  readonly data: ReadonlyArray<T>
  /** The size of the whole filtered list, not of the page. */
  readonly total_count: number
  /** Whether an item follows this page: the next page (or `starting_after` the last item's id) is not empty. */
  readonly has_more: boolean
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
  /**
   * The id of the last item of the previous page, in the same order: the page that follows it,
   * whatever its depth (not with `page`).
   */
  readonly starting_after?: string | undefined
}

/** The largest page the platform serves. */
const MAX_PAGE_SIZE = 100

/**
 * A list call: `await` it for one page, or iterate it with `for await` for every item across pages:
 * pages of 100 from the first one asked for (by `page` or `starting_after`), each next one by
 * `starting_after` the last item seen, so every page costs the same at any depth and items inserted
 * meanwhile never make one repeat or be skipped (docs/client.md); it stops at the page without `has_more`.
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
    let params: PageParams = { ...this.params, page_size: size }
    for (;;) {
      const result = await this.fetchPage(params)
      yield* result.data
      const last = result.data.at(-1) as { readonly id?: unknown } | undefined
      if (result.has_more === false || result.data.length < size || typeof last?.id !== "string") return
      const { page: _page, ...rest } = params
      params = { ...rest, starting_after: last.id }
    }
  }

  /** Every item across pages, as one array (mind large lists). */
  async toArray(): Promise<Array<T>> {
    const items: Array<T> = []
    for await (const item of this) items.push(item)
    return items
  }
}
