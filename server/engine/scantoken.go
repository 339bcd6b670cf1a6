package engine

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
)

// SCAN continuation tokens name where the next page starts: the last key
// the request examined, which may be a key the requester is not allowed
// to see (Request.Visible). So a token is sealed: AES-256-GCM under a key
// the engine draws at random when it is created, with the request's
// TokenScope (who may read what) and the pattern as additional data. A
// client learns nothing from a token but a bound on the examined key's
// length (the plaintext is padded to tokenSize: every key of up to about
// 1 KiB gives a token of one length), and a token is
// accepted only in the scope it was given in, for the pattern it was
// given for, by the engine that made it (a restarted server refuses its
// predecessor's tokens).
//
// The nonce is derived from the sealed content (HMAC-SHA-256 under a
// second key, truncated): the same position for the same scope and
// pattern always gives the same token, and distinct contents get distinct
// nonces, so no count of tokens wears the key out the way random 96-bit
// nonces would.
//
// Layout, before base64url (no padding):
//
//	nonce (12) | GCM(uvarint(len(key)) | key | zero padding to tokenSize) with its tag (16)
type tokenSealer struct {
	aead cipher.AEAD
	mac  [32]byte
}

// tokenMinPlain is the size of every token's plaintext for a key of up to
// tokenMinPlain - binary.MaxVarintLen64 bytes: tokens of such keys all have
// one length (issue #25: padding to 64 bytes told a 12-byte key from a
// 306-byte one). Longer keys pad to a power of two up to tokenStepPlain,
// then to a multiple of it, so a token tells a long key's length only to
// within a factor of two, or of 1 MiB (without doubling the largest).
const (
	tokenMinPlain  = 1 << 10
	tokenStepPlain = 1 << 20
)

// tokenSize is the plaintext size of a token for n bytes of length prefix
// and key; a valid plaintext size is its own tokenSize.
func tokenSize(n int) int {
	switch {
	case n <= tokenMinPlain:
		return tokenMinPlain
	case n > tokenStepPlain:
		return (n + tokenStepPlain - 1) / tokenStepPlain * tokenStepPlain
	}
	p := tokenMinPlain
	for p < n {
		p <<= 1
	}
	return p
}

// tokenDomain separates the additional data of SCAN tokens from any other
// use of the keys.
const tokenDomain = "ssgen scan token 1\x00"

const (
	tokenNonce = 12
	tokenTag   = 16
)

func newTokenSealer() *tokenSealer {
	var k [64]byte
	if _, err := rand.Read(k[:]); err != nil {
		panic("engine: no randomness for SCAN tokens: " + err.Error()) // crypto/rand never fails on supported systems
	}
	return newTokenSealerFrom(k)
}

func newTokenSealerFrom(k [64]byte) *tokenSealer {
	block, err := aes.NewCipher(k[:32])
	if err != nil {
		panic(err) // a 32-byte key is always valid
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		panic(err)
	}
	s := &tokenSealer{aead: aead}
	copy(s.mac[:], k[32:])
	return s
}

// additional is the data a token is bound to.
func tokenAdditional(scope string, pattern []byte) []byte {
	ad := make([]byte, 0, len(tokenDomain)+binary.MaxVarintLen64+len(scope)+len(pattern))
	ad = append(ad, tokenDomain...)
	ad = binary.AppendUvarint(ad, uint64(len(scope)))
	ad = append(ad, scope...)
	return append(ad, pattern...)
}

// seal returns the token for resuming after key.
func (s *tokenSealer) seal(scope string, pattern []byte, key string) string {
	n := tokenSize(binary.MaxVarintLen64 + len(key))
	plain := make([]byte, 0, n)
	plain = binary.AppendUvarint(plain, uint64(len(key)))
	plain = append(plain, key...)
	plain = plain[:n] // the rest is zero
	ad := tokenAdditional(scope, pattern)
	m := hmac.New(sha256.New, s.mac[:])
	m.Write(ad)
	m.Write(plain)
	nonce := m.Sum(nil)[:tokenNonce]
	out := make([]byte, tokenNonce, tokenNonce+len(plain)+tokenTag)
	copy(out, nonce)
	out = s.aead.Seal(out, nonce, plain, ad)
	return base64.RawURLEncoding.EncodeToString(out)
}

// open returns the key a token resumes after; ok is false for anything
// seal did not make for this scope and pattern.
func (s *tokenSealer) open(scope string, pattern, token []byte) (key string, ok bool) {
	enc := base64.RawURLEncoding.Strict()
	raw := make([]byte, enc.DecodedLen(len(token)))
	n, err := enc.Decode(raw, token)
	// The decoder skips line breaks: a token must be exactly the text seal
	// wrote.
	if err != nil || enc.EncodedLen(n) != len(token) || n < tokenNonce+tokenTag || tokenSize(n-tokenNonce-tokenTag) != n-tokenNonce-tokenTag {
		return "", false
	}
	raw = raw[:n]
	plain, err := s.aead.Open(nil, raw[:tokenNonce], raw[tokenNonce:], tokenAdditional(scope, pattern))
	if err != nil {
		return "", false
	}
	l, m := binary.Uvarint(plain)
	if m <= 0 || l == 0 || l > uint64(len(plain)-m) {
		return "", false
	}
	return string(plain[m : m+int(l)]), true
}
