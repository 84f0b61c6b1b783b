import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { encodeMessage, frameReader, parseMessage } from "../../packages/http/src/iso8583/Codec.js"
import { subelements } from "../../packages/http/src/iso8583/Messages.js"
import { pack, unpack } from "../support/iso8583.js"

/**
 * The host's own codec (packages/http/src/iso8583/Codec.ts) against the `iso_8583` npm package, the
 * dialect's reference here: whatever message `iso_8583` packs, the codec reads field for field, and
 * whatever the codec writes, `iso_8583` reads back the same.
 */
const digits = (min: number, max: number) => fc.stringMatching(new RegExp(`^[0-9]{${min},${max}}$`))
// The characters iso_8583 takes in an `ans` field (it refuses #, @ and \\); the host takes any printable ASCII.
const printable = (min: number, max: number) =>
  fc.stringMatching(new RegExp(`^[0-9A-Za-z!$%^&*()_+|~=\`{}\\[\\]:";'<>?,./ -]{${min},${max}}$`))

/** Messages of the fields the host reads and writes, in the formats of the 1987 table. */
const messages = fc
  .record(
    {
      0: fc.constantFrom("0100", "0101", "0110", "0200", "0220", "0400", "0420", "0800", "0810"),
      2: digits(12, 19),
      3: digits(6, 6),
      4: digits(12, 12),
      7: digits(10, 10),
      11: digits(6, 6),
      14: digits(4, 4),
      18: digits(4, 4),
      22: digits(3, 3),
      32: digits(1, 11),
      37: fc.stringMatching(/^[0-9A-Z ]{12}$/),
      38: fc.stringMatching(/^[0-9A-Z]{6}$/),
      39: fc.constantFrom("00", "10", "51", "N7", "30"),
      41: printable(8, 8),
      42: printable(15, 15),
      43: printable(40, 40),
      48: printable(1, 120),
      49: digits(3, 3),
      70: digits(3, 3),
      90: digits(42, 42)
    },
    { requiredKeys: ["0", "11"] }
  )
  // fast-check's records have no prototype; iso_8583 calls hasOwnProperty on what it is given.
  .map((fields) => ({ ...fields }) as Record<string, string>)

const asRecord = (message: { mti: string; fields: ReadonlyMap<number, string> }) =>
  Object.fromEntries([["0", message.mti], ...[...message.fields].map(([field, value]) => [String(field), value])])

describe("the ISO 8583 codec against iso_8583", () => {
  it("reads every frame iso_8583 packs, field for field", () => {
    fc.assert(
      fc.property(messages, (fields) => {
        const frame = pack(fields)
        const parsed = parseMessage(frame.subarray(2))
        expect(parsed._tag).toBe("Message")
        expect(asRecord(parsed as never)).toEqual(fields)
      }),
      { numRuns: 200 }
    )
  })

  it("writes frames iso_8583 reads back the same, with a secondary bitmap only when a field above 64 is present", () => {
    fc.assert(
      fc.property(messages, (fields) => {
        const { 0: mti, ...rest } = fields
        const frame = encodeMessage({ mti: mti!, fields: new Map(Object.entries(rest).map(([field, value]) => [Number(field), value])) })
        expect(unpack(frame)).toEqual(fields)
        expect((frame[6]! & 0x80) !== 0).toBe(rest["70"] !== undefined || rest["90"] !== undefined)
      }),
      { numRuns: 200 }
    )
  })

  it("cuts a stream into frames however it arrives, and tells an unreadable frame from one with a readable MTI", () => {
    const frames = [pack({ 0: "0800", 7: "0301120000", 11: "000001", 70: "301" }), pack({ 0: "0100", 11: "000002", 4: "000000000100" })]
    const stream = Buffer.concat(frames)
    for (let cut = 1; cut < stream.length; cut++) {
      const reader = frameReader()
      const got = [...reader.push(stream.subarray(0, cut)), ...reader.push(stream.subarray(cut))]
      expect(got.map((body) => body.toString("hex"))).toEqual(frames.map((frame) => frame.subarray(2).toString("hex")))
      expect(reader.pendingBytes()).toBe(0)
    }
    expect(parseMessage(Buffer.from("hello"))).toMatchObject({ _tag: "Unparsable", mti: null })
    const text = frameReader()
    expect(text.push(Buffer.from("GET / HTTP/1.1"))).toEqual([])
    expect(text.unreadableHead()).toBe(true)
    const partial = frameReader()
    partial.push(frames[0]!.subarray(0, 7))
    expect(partial.unreadableHead()).toBe(false)
    // Field 2 announced (bit 2) but the frame ends in its length.
    const truncated = Buffer.concat([Buffer.from("0100"), Buffer.from([0x40, 0, 0, 0, 0, 0, 0, 0]), Buffer.from("1")])
    expect(parseMessage(truncated)).toMatchObject({ _tag: "Unparsable", mti: "0100" })
    // Letters in a numeric field, and bytes after the last field.
    const letters = Buffer.concat([Buffer.from("0100"), Buffer.from([0x20, 0, 0, 0, 0, 0, 0, 0]), Buffer.from("00000A")])
    expect(parseMessage(letters)).toMatchObject({ _tag: "Unparsable", mti: "0100", problem: "field 3 must be digits" })
    const trailing = Buffer.concat([Buffer.from("0100"), Buffer.from([0x20, 0, 0, 0, 0, 0, 0, 0]), Buffer.from("000000X")])
    expect(parseMessage(trailing)).toMatchObject({ _tag: "Unparsable", problem: "bytes follow the last field" })
  })

  it("reads field 48's subelements, with or without Mastercard's category code first, and nothing else", () => {
    expect(subelements("9203123")).toEqual(new Map([["92", "123"]]))
    expect(subelements("R610119203123")).toEqual(
      new Map([
        ["61", "1"],
        ["92", "123"]
      ])
    )
    expect(subelements("T6101092031234")).toBeNull()
    expect(subelements("920312")).toBeNull()
    expect(subelements("")).toEqual(new Map())
  })
})
