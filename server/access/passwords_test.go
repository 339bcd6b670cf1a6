package access

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"
)

func TestPasswordFileAcceptsBcryptLinesAndComments(t *testing.T) {
	h, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParsePasswords(strings.NewReader("# users\n\nalice:" + string(h) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !p.check("alice", []byte("s3cret")) || p.check("alice", []byte("wrong")) || p.check("bob", []byte("s3cret")) {
		t.Fatal("check answers wrongly")
	}
}

func TestPasswordFileRejectsMalformedLines(t *testing.T) {
	h, _ := bcrypt.GenerateFromPassword([]byte("x"), bcrypt.MinCost)
	for name, text := range map[string]string{
		"no colon":      "alice",
		"empty user":    ":" + string(h),
		"not bcrypt":    "alice:plaintext",
		"listed twice":  "alice:" + string(h) + "\nalice:" + string(h),
		"sha-crypt":     "alice:$6$salt$abc",
		"empty hash":    "alice:",
		"only username": "alice:\n",
	} {
		if _, err := ParsePasswords(strings.NewReader(text)); !errors.Is(err, ErrPasswordFile) {
			t.Errorf("%s: err %v, want ErrPasswordFile", name, err)
		}
	}
}
