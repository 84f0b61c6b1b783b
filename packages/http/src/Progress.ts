/** Where progress goes: a writable stream (stderr), told whether it is a terminal. */
export interface ProgressOutput {
  readonly write: (text: string) => unknown
  readonly isTTY?: boolean | undefined
}

/** One step's progress: rows done out of a total (when known), and the rate. */
export interface StepProgress {
  /** Counts `count` more rows done. */
  readonly advance: (count?: number) => void
  /** Ends the step with its final count (what committed), printing its line; returns its figures (`1/1, 0.2 s, 5/s`). */
  readonly finish: (done?: number) => string
}

/** The shortest interval between two redraws of a terminal's progress line. */
const REDRAW_INTERVAL_MS = 100

const rate = (done: number, elapsedMs: number) => (elapsedMs <= 0 ? "" : `, ${Math.round(done / (elapsedMs / 1000))}/s`)
const seconds = (elapsedMs: number) => `${(elapsedMs / 1000).toFixed(1)} s`

/**
 * Progress of a long command on stderr (stdout keeps the command's own output): on a terminal one
 * line redrawn in place (`cards: 1200/5000 (24%, 800/s)`), otherwise one line per finished step —
 * or none with `lines: false`, for a command whose own stdout line per step carries the figures.
 */
export const progress = (output: ProgressOutput, options: { readonly lines?: boolean; readonly now?: () => number } = {}) => {
  const now = options.now ?? (() => performance.now())
  return {
    /** Starts a step; `total` is what there is to do, when known. */
    step: (name: string, total?: number | undefined): StepProgress => {
      const startedMs = now()
      let done = 0
      let drawnMs = -Infinity
      const line = (final: boolean) => {
        const elapsed = now() - startedMs
        const counted =
          total === undefined
            ? `${done}`
            : `${done}/${total}${total > 0 ? ` (${Math.floor((100 * Math.min(done, total)) / total)}%` : " ("}`
        const tail =
          total === undefined
            ? ` (${seconds(elapsed)}${rate(done, elapsed)})`
            : `${total > 0 ? ", " : ""}${seconds(elapsed)}${rate(done, elapsed)})`
        return `issuing: ${name}: ${counted}${tail}${final ? " done" : ""}`
      }
      const draw = () => {
        if (output.isTTY !== true || now() - drawnMs < REDRAW_INTERVAL_MS) return
        drawnMs = now()
        output.write(`\r\u001b[2K${line(false)}`)
      }
      draw()
      return {
        advance: (count = 1) => {
          done += count
          draw()
        },
        finish: (final) => {
          if (final !== undefined) done = final
          if (output.isTTY === true) output.write(`\r\u001b[2K${line(true)}\n`)
          else if (options.lines !== false) output.write(`${line(true)}\n`)
          const elapsed = now() - startedMs
          return `${total === undefined ? done : `${done}/${total}`}, ${seconds(elapsed)}${rate(done, elapsed)}`
        }
      }
    }
  }
}
