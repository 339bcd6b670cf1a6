package codec

import (
	"errors"
	"fmt"
)

// MaxDepth is the deepest nesting of containers (MessagePack arrays and
// maps, JSON arrays and objects) that MsgPack, JSON and Evolved decode:
// stored bytes with more than MaxDepth containers open at once fail with a
// *DecodeError matching ErrTooDeep. The decoders recurse once per level,
// so without a bound a small stored value (3 bytes a level) could exhaust
// the goroutine stack, which kills the process. encoding/json has the
// same limit of its own.
const MaxDepth = 10000

// ErrTooDeep is matched (errors.Is) by the error of a decode that met
// stored bytes nesting more than MaxDepth containers.
var ErrTooDeep = errors.New("codec: value nested too deep")

func tooDeep() error {
	return fmt.Errorf("%w (more than %d levels of arrays and maps)", ErrTooDeep, MaxDepth)
}

// jsonDepth checks, without recursion, that data nests at most MaxDepth
// JSON arrays and objects. It looks at brackets outside strings only and
// leaves every other syntax error to the decoder.
func jsonDepth(data []byte) error {
	depth := 0
	for i := 0; i < len(data); i++ {
		switch data[i] {
		case '"':
			for i++; i < len(data) && data[i] != '"'; i++ {
				if data[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			depth++
			if depth > MaxDepth {
				return tooDeep()
			}
		case ']', '}':
			depth--
		}
	}
	return nil
}
