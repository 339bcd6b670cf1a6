package access

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"golang.org/x/crypto/bcrypt"
)

// ErrPasswordFile wraps every problem found in a password file.
var ErrPasswordFile = errors.New("server: password file")

// Passwords maps user names to bcrypt hashes.
type Passwords map[string][]byte

// LoadPasswords reads a password file; see ParsePasswords.
func LoadPasswords(path string) (Passwords, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPasswordFile, err)
	}
	defer f.Close()
	return ParsePasswords(f)
}

// ParsePasswords reads lines "username:bcrypt-hash" (as printed by
// `htpasswd -nbB user pass` or any bcrypt tool; $2a$, $2b$ and $2y$
// hashes). Blank lines and lines starting with '#' are skipped. The user
// name is everything before the first ':'; it may not be empty nor appear
// twice.
func ParsePasswords(r io.Reader) (Passwords, error) {
	p := Passwords{}
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		user, hash, ok := strings.Cut(line, ":")
		if !ok || user == "" {
			return nil, fmt.Errorf("%w: line %d: want username:bcrypt-hash", ErrPasswordFile, n)
		}
		if _, err := bcrypt.Cost([]byte(hash)); err != nil {
			return nil, fmt.Errorf("%w: line %d: user %q: %v", ErrPasswordFile, n, user, err)
		}
		if _, dup := p[user]; dup {
			return nil, fmt.Errorf("%w: line %d: user %q listed twice", ErrPasswordFile, n, user)
		}
		p[user] = []byte(hash)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrPasswordFile, err)
	}
	return p, nil
}

// check reports whether password is user's. An unknown user costs a
// comparison too, so that timing does not tell which names exist.
func (p Passwords) check(user string, password []byte) bool {
	hash, ok := p[user]
	if !ok {
		_ = bcrypt.CompareHashAndPassword(dummyHash(), password)
		return false
	}
	return bcrypt.CompareHashAndPassword(hash, password) == nil
}

// dummyHash is compared against for unknown users, at the default cost.
var dummyHash = sync.OnceValue(func() []byte {
	h, _ := bcrypt.GenerateFromPassword([]byte("no user has this password"), bcrypt.DefaultCost)
	return h
})

// Check reports whether password is user's, as the broker checks a
// CONNECT: the web console signs users in with the same file. It costs a
// bcrypt comparison whether or not the user exists.
func (p Passwords) Check(user string, password []byte) bool { return p.check(user, password) }
