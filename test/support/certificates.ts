import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

/** A certificate and its key, PEM text. */
export interface Issued {
  readonly cert: string
  readonly key: string
}

/**
 * Certificates for mutual TLS tests, made with the openssl CLI in a temporary directory: a CA, a
 * server certificate for 127.0.0.1 and a client certificate it signed, and a stranger's CA with a
 * client certificate of its own (one the first CA did not sign). `dir` holds the files as PEM.
 */
export const makeCertificates = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "issuing-certs-"))
  const file = (name: string) => path.join(dir, name)
  const openssl = (...args: Array<string>) => execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "ignore", "pipe"] })
  const ca = (name: string) => {
    openssl(
      "req",
      "-x509",
      "-newkey",
      "rsa:2048",
      "-nodes",
      "-keyout",
      `${name}.key`,
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-subj",
      `/CN=${name}`
    )
  }
  const signed = (name: string, by: string, extensions: string) => {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", `/CN=${name}`)
    fs.writeFileSync(file(`${name}.ext`), extensions)
    openssl(
      "x509",
      "-req",
      "-in",
      `${name}.csr`,
      "-CA",
      `${by}.pem`,
      "-CAkey",
      `${by}.key`,
      "-CAcreateserial",
      "-out",
      `${name}.pem`,
      "-days",
      "2",
      "-extfile",
      `${name}.ext`
    )
  }
  ca("ca")
  ca("stranger-ca")
  signed("server", "ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n")
  signed("gateway", "ca", "extendedKeyUsage=clientAuth\n")
  signed("stranger", "stranger-ca", "extendedKeyUsage=clientAuth\n")
  const read = (name: string): Issued => ({
    cert: fs.readFileSync(file(`${name}.pem`), "utf8"),
    key: fs.readFileSync(file(`${name}.key`), "utf8")
  })
  return {
    dir,
    paths: { ca: file("ca.pem"), serverCert: file("server.pem"), serverKey: file("server.key") },
    ca: fs.readFileSync(file("ca.pem"), "utf8"),
    server: read("server"),
    gateway: read("gateway"),
    stranger: read("stranger"),
    remove: () => fs.rmSync(dir, { recursive: true, force: true })
  }
}
