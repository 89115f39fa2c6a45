package metricsauth_test

import (
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"os"
	"strings"
	"testing"

	. "github.com/onsi/gomega"
)

// The ServiceAccount tokens of envtest's kube-apiserver are ES256 JWTs
// (its signing key is ECDSA P-256). These helpers read and sign them by
// hand: no JWT library is a dependency of the module, and ES256 is one
// SHA-256 digest and one ECDSA signature (RFC 7518, section 3.4).

var b64 = base64.RawURLEncoding

// jwtParts splits a token into its header, claims and signature.
func jwtParts(t *testing.T, token string) (header, claims, signature string) {
	t.Helper()
	parts := strings.Split(token, ".")
	NewWithT(t).Expect(parts).To(HaveLen(3), "a JWT")
	return parts[0], parts[1], parts[2]
}

// claimsOf decodes the claims of token.
func claimsOf(t *testing.T, token string) map[string]any {
	t.Helper()
	_, encoded, _ := jwtParts(t, token)
	data, err := b64.DecodeString(encoded)
	g := NewWithT(t)
	g.Expect(err).NotTo(HaveOccurred())
	claims := map[string]any{}
	g.Expect(json.Unmarshal(data, &claims)).To(Succeed())
	return claims
}

// audiencesOf returns the aud claim of token.
func audiencesOf(t *testing.T, token string) []string {
	t.Helper()
	var audiences []string
	switch aud := claimsOf(t, token)["aud"].(type) {
	case string:
		audiences = append(audiences, aud)
	case []any:
		for _, a := range aud {
			audiences = append(audiences, a.(string))
		}
	}
	return audiences
}

// ecdsaKey reads a PKCS #8 PEM ECDSA private key.
func ecdsaKey(t *testing.T, path string) *ecdsa.PrivateKey {
	t.Helper()
	g := NewWithT(t)
	data, err := os.ReadFile(path)
	g.Expect(err).NotTo(HaveOccurred())
	block, _ := pem.Decode(data)
	g.Expect(block).NotTo(BeNil(), "PEM in %s", path)
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	g.Expect(err).NotTo(HaveOccurred())
	g.Expect(key).To(BeAssignableToTypeOf(&ecdsa.PrivateKey{}), "an ECDSA key in %s", path)
	return key.(*ecdsa.PrivateKey)
}

// resign returns token with its claims changed by change (nil: as they
// are) and signed with key, under its own header (its key ID included).
func resign(t *testing.T, token string, key *ecdsa.PrivateKey, change func(map[string]any)) string {
	t.Helper()
	g := NewWithT(t)
	header, encoded, _ := jwtParts(t, token)
	if change != nil {
		claims := claimsOf(t, token)
		change(claims)
		data, err := json.Marshal(claims)
		g.Expect(err).NotTo(HaveOccurred())
		encoded = b64.EncodeToString(data)
	}
	digest := sha256.Sum256([]byte(header + "." + encoded))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	g.Expect(err).NotTo(HaveOccurred())
	size := (key.Curve.Params().BitSize + 7) / 8
	signature := make([]byte, 2*size)
	r.FillBytes(signature[:size])
	s.FillBytes(signature[size:])
	return header + "." + encoded + "." + b64.EncodeToString(signature)
}

// tamper returns the claims of claimsFrom under the header and signature
// of signed: what someone without the key makes of two tokens.
func tamper(t *testing.T, signed, claimsFrom string) string {
	t.Helper()
	header, _, signature := jwtParts(t, signed)
	_, claims, _ := jwtParts(t, claimsFrom)
	return header + "." + claims + "." + signature
}
