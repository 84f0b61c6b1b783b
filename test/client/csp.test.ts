import { withCardDisplayFrameSrc } from "@issuing/client"
import { describe, expect, it } from "vitest"

const ORIGIN = "https://issuing.example.com"

// Real-world shapes of host page policies and where rule 3 puts the platform's origin.
const CASES: ReadonlyArray<{ readonly name: string; readonly policy: string; readonly expected: string }> = [
  {
    name: "frame-src present: added there, nothing else changes",
    policy: "default-src 'self'; frame-src 'self' https://js.stripe.com; script-src 'self'",
    expected: `default-src 'self'; frame-src 'self' https://js.stripe.com ${ORIGIN}; script-src 'self'`
  },
  {
    name: "frame-src 'none' is replaced",
    policy: "default-src 'self'; frame-src 'none'; object-src 'none'",
    expected: `default-src 'self'; frame-src ${ORIGIN}; object-src 'none'`
  },
  {
    name: "only default-src: added to default-src (frames fall back to it)",
    policy: "default-src 'self'; img-src 'self' data:; object-src 'none'",
    expected: `default-src 'self' ${ORIGIN}; img-src 'self' data:; object-src 'none'`
  },
  {
    name: "default-src 'none' is replaced",
    policy: "default-src 'none'; script-src 'self'; style-src 'self'",
    expected: `default-src ${ORIGIN}; script-src 'self'; style-src 'self'`
  },
  {
    name: "child-src and default-src, no frame-src: child-src governs frames (CSP3)",
    policy: "default-src 'self'; child-src 'self' blob:; worker-src 'self'",
    expected: `default-src 'self'; child-src 'self' blob: ${ORIGIN}; worker-src 'self'`
  },
  {
    name: "frame-src wins over child-src and default-src",
    policy: "default-src 'none'; child-src 'none'; frame-src 'self'",
    expected: `default-src 'none'; child-src 'none'; frame-src 'self' ${ORIGIN}`
  },
  {
    name: "already allowed: no duplicate",
    policy: `default-src 'self'; frame-src ${ORIGIN}`,
    expected: `default-src 'self'; frame-src ${ORIGIN}`
  },
  {
    name: "already allowed with a trailing slash or another case",
    policy: "frame-src HTTPS://ISSUING.EXAMPLE.COM/",
    expected: "frame-src HTTPS://ISSUING.EXAMPLE.COM/"
  },
  {
    name: "already allowed by a wildcard or the scheme",
    policy: "default-src 'self'; frame-src https:",
    expected: "default-src 'self'; frame-src https:"
  },
  {
    name: "* allows it",
    policy: "frame-src *",
    expected: "frame-src *"
  },
  {
    name: "no frame-src, child-src or default-src: frames are not restricted, nothing to add",
    policy: "script-src 'self'; object-src 'none'; upgrade-insecure-requests",
    expected: "script-src 'self'; object-src 'none'; upgrade-insecure-requests"
  },
  {
    name: "empty policy",
    policy: "",
    expected: ""
  },
  {
    name: "directive names in any case; only the first frame-src counts",
    policy: "Default-Src 'self'; FRAME-SRC 'self'; frame-src https://other.example",
    expected: `Default-Src 'self'; frame-src 'self' ${ORIGIN}; frame-src https://other.example`
  },
  {
    name: "a GitHub-style policy",
    policy:
      "default-src 'none'; base-uri 'self'; child-src github.com/assets-cdn/worker/ gist.github.com/assets-cdn/worker/; connect-src 'self' uploads.github.com; frame-ancestors 'none'; frame-src viewscreen.githubusercontent.com notebooks.githubusercontent.com; img-src 'self' data:; script-src github.githubassets.com; style-src 'unsafe-inline' github.githubassets.com",
    expected: `default-src 'none'; base-uri 'self'; child-src github.com/assets-cdn/worker/ gist.github.com/assets-cdn/worker/; connect-src 'self' uploads.github.com; frame-ancestors 'none'; frame-src viewscreen.githubusercontent.com notebooks.githubusercontent.com ${ORIGIN}; img-src 'self' data:; script-src github.githubassets.com; style-src 'unsafe-inline' github.githubassets.com`
  },
  {
    name: "frame-ancestors is not frame-src",
    policy: "frame-ancestors 'none'; default-src 'self'",
    expected: `frame-ancestors 'none'; default-src 'self' ${ORIGIN}`
  },
  {
    name: "trailing semicolon and spacing kept",
    policy: "default-src 'self';  frame-src 'none' ; ",
    expected: `default-src 'self';  frame-src ${ORIGIN} ; `
  },
  {
    name: "several policies (comma-separated): each one gets it",
    policy: "default-src 'self', frame-src 'none'",
    expected: `default-src 'self' ${ORIGIN}, frame-src ${ORIGIN}`
  }
]

describe("withCardDisplayFrameSrc", () => {
  it.each(CASES)("$name", ({ expected, policy }) => {
    expect(withCardDisplayFrameSrc(policy, ORIGIN)).toBe(expected)
  })

  it("takes an embed_url or base URL and uses its origin; refuses anything that is not http(s)", () => {
    expect(withCardDisplayFrameSrc("frame-src 'none'", `${ORIGIN}/issuing/v1/cards/embed?session_token=x`)).toBe(`frame-src ${ORIGIN}`)
    expect(withCardDisplayFrameSrc("frame-src 'none'", "http://127.0.0.1:8080")).toBe("frame-src http://127.0.0.1:8080")
    expect(() => withCardDisplayFrameSrc("frame-src 'none'", "issuing.example.com")).toThrow(TypeError)
    expect(() => withCardDisplayFrameSrc("frame-src 'none'", "javascript:alert(1)")).toThrow(TypeError)
  })

  it("is idempotent", () => {
    for (const { policy } of CASES) {
      const once = withCardDisplayFrameSrc(policy, ORIGIN)
      expect(withCardDisplayFrameSrc(once, ORIGIN)).toBe(once)
    }
  })
})
