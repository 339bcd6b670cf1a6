package resp3

// AppendArray appends an array header announcing n elements.
func AppendArray(dst []byte, n int) []byte { return appendLen(dst, '*', n) }

// AppendBulk appends b as a bulk string.
func AppendBulk(dst, b []byte) []byte {
	dst = appendLen(dst, '$', len(b))
	dst = append(dst, b...)
	return append(dst, '\r', '\n')
}

// AppendBulkString appends s as a bulk string.
func AppendBulkString(dst []byte, s string) []byte {
	dst = appendLen(dst, '$', len(s))
	dst = append(dst, s...)
	return append(dst, '\r', '\n')
}

// AppendCommand appends a request: an array of the bulk strings args.
func AppendCommand(dst []byte, args ...[]byte) []byte {
	dst = AppendArray(dst, len(args))
	for _, a := range args {
		dst = AppendBulk(dst, a)
	}
	return dst
}

// ParseRequest decodes a request payload, an array of bulk strings, and
// appends its elements to args (pass a reused slice to avoid allocating).
// The elements alias payload. Anything else — another type, a nested array,
// a null, a bad length, a missing CRLF, trailing bytes — is an error that
// matches ErrSyntax.
func ParseRequest(payload []byte, args [][]byte) ([][]byte, error) {
	r := reader{buf: payload}
	c, err := r.typeByte()
	if err != nil {
		return args, err
	}
	if c != '*' {
		r.pos--
		return args, r.fail("request is not an array")
	}
	n, err := r.arrayLen()
	if err != nil {
		return args, err
	}
	for range n {
		if c, err = r.typeByte(); err != nil {
			return args, err
		}
		if c != '$' {
			r.pos--
			return args, r.fail("request element is not a bulk string")
		}
		start := r.pos
		l, err := r.length()
		if err != nil {
			return args, err
		}
		if l < 0 {
			return args, &SyntaxError{Offset: start, Reason: "null bulk string in request"}
		}
		b, err := r.bulkBody(l)
		if err != nil {
			return args, err
		}
		args = append(args, b)
	}
	return args, r.end()
}
