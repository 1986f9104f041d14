"""Mint a JSON Web Token outside Go, for rshub's tests.

Usage: python3 mint.py ALG KEYFILE HEADER_JSON PAYLOAD_JSON

ALG is HS256/HS384/HS512 (KEYFILE holds the secret), RS256, PS256, ES256
or EdDSA (KEYFILE is a PEM private key, signed with openssl), or none.
HEADER_JSON is merged over {"alg": ALG, "typ": "JWT"}. Standard library
and the openssl command only.
"""
import base64, hashlib, hmac, json, subprocess, sys, tempfile

def b64(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

def der_to_raw(der, size):
    # ECDSA-Sig-Value ::= SEQUENCE { r INTEGER, s INTEGER }
    def read(buf, i):
        tag, n = buf[i], buf[i + 1]
        i += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(buf[i:i + k], "big")
            i += k
        return tag, buf[i:i + n], i + n
    _, seq, _ = read(der, 0)
    _, r, j = read(seq, 0)
    _, s, _ = read(seq, j)
    return int.from_bytes(r, "big").to_bytes(size, "big") + int.from_bytes(s, "big").to_bytes(size, "big")

def main():
    alg, keyfile, header, payload = sys.argv[1:5]
    h = {"alg": alg, "typ": "JWT"}
    h.update(json.loads(header))
    signing = (b64(json.dumps(h).encode()) + "." + b64(payload.encode())).encode()
    if alg == "none":
        sig = b""
    elif alg.startswith("HS"):
        digest = {"HS256": hashlib.sha256, "HS384": hashlib.sha384, "HS512": hashlib.sha512}[alg]
        sig = hmac.new(open(keyfile, "rb").read(), signing, digest).digest()
    elif alg == "EdDSA":
        with tempfile.NamedTemporaryFile() as f:  # one-shot EdDSA reads a file, not a pipe
            f.write(signing)
            f.flush()
            sig = subprocess.run(["openssl", "pkeyutl", "-sign", "-rawin", "-inkey", keyfile, "-in", f.name],
                                 capture_output=True, check=True).stdout
    else:
        opts = ["-sigopt", "rsa_padding_mode:pss", "-sigopt", "rsa_pss_saltlen:digest"] if alg.startswith("PS") else []
        sig = subprocess.run(["openssl", "dgst", "-sha" + alg[2:], "-sign", keyfile] + opts,
                             input=signing, capture_output=True, check=True).stdout
        if alg.startswith("ES"):
            sig = der_to_raw(sig, {"ES256": 32, "ES384": 48, "ES512": 66}[alg])
    sys.stdout.write(signing.decode() + "." + b64(sig))

main()
