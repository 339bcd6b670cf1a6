package server

import (
	"crypto/tls"
	"io"

	"github.com/ssgen/ssgen/server/access"
)

// Authentication, authorization and TLS live in package access; these
// names keep the ones they had in this package working.

// Security configures authentication and authorization of the embedded
// broker; see access.Security.
type Security = access.Security

// Passwords maps user names to bcrypt hashes; see access.Passwords.
type Passwords = access.Passwords

// Policy is a set of state store authorization rules; see access.Policy.
type Policy = access.Policy

// Principal is who a request is made as, in the terms of a Policy; see
// access.Principal.
type Principal = access.Principal

// MaxIdentityBytes bounds each name of an identity that authorization
// rules are matched against; see access.MaxIdentityBytes.
const MaxIdentityBytes = access.MaxIdentityBytes

// Errors of the access files; match them with errors.Is.
var (
	ErrPasswordFile = access.ErrPasswordFile
	ErrPolicy       = access.ErrPolicy
	ErrTLSFiles     = access.ErrTLSFiles
)

// LoadPasswords reads a password file; see access.ParsePasswords.
func LoadPasswords(path string) (Passwords, error) { return access.LoadPasswords(path) }

// ParsePasswords reads a password file's lines; see access.ParsePasswords.
func ParsePasswords(r io.Reader) (Passwords, error) { return access.ParsePasswords(r) }

// LoadPolicy reads an authorization file; see access.ParsePolicy.
func LoadPolicy(path string) (*Policy, error) { return access.LoadPolicy(path) }

// ParsePolicy reads the YAML authorization format; see access.ParsePolicy.
func ParsePolicy(data []byte) (*Policy, error) { return access.ParsePolicy(data) }

// LoadTLS builds the listener's TLS configuration from PEM files; see
// access.LoadTLS.
func LoadTLS(certFile, keyFile, clientCAFile string) (*tls.Config, error) {
	return access.LoadTLS(certFile, keyFile, clientCAFile)
}
