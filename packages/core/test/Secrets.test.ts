import { describe, expect, it } from "@effect/vitest"
import { hashSecret } from "../src/access/Secrets.js"

// The stored form of a secret is its SHA-256 in hex, of the text as UTF-8: keys stored by any
// version of the platform must match the hash of the same secret today.
describe("hashSecret", () => {
  it("is the SHA-256 of the text's UTF-8 bytes, hex", () => {
    expect(hashSecret("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    // "é" is two bytes in UTF-8 (c3 a9), one in Latin-1: a hash of the wrong encoding differs.
    expect(hashSecret("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c")
  })
})
