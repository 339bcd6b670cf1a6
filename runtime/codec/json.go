package codec

import "encoding/json"

// JSON encodes T with encoding/json, reading `json` struct tags. The output
// is deterministic: encoding/json writes struct fields in declaration order
// and sorts map keys. Unknown object members are ignored on decode, so a
// newer writer may add fields.
type JSON[T any] struct{}

// ContentType returns ContentTypeJSON.
func (JSON[T]) ContentType() string { return ContentTypeJSON }

// Encode returns the JSON form of v.
func (JSON[T]) Encode(v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, encodeErrAt(jsonFormat, v, err)
	}
	return b, nil
}

// Decode parses one JSON value; anything but white space after it is an
// error, and so is nesting deeper than MaxDepth (ErrTooDeep).
func (JSON[T]) Decode(data []byte) (T, error) {
	var v T
	if err := jsonDepth(data); err != nil {
		return v, decodeErr[T]("json", err)
	}
	if err := json.Unmarshal(data, &v); err != nil {
		var zero T
		return zero, decodeErrAt[T](jsonFormat, data, err)
	}
	return v, nil
}
