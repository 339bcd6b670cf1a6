// Package pahoctx ties a context to a paho connection: paho does not wake
// a request waiting for its acknowledgement (a SUBACK, a PUBACK) when the
// connection drops; it waits out the request's context. A context from
// Bound ends with the connection too.
package pahoctx

import (
	"context"

	"github.com/eclipse/paho.golang/paho"
)

// Bound returns a context that ends when ctx does or when c's connection
// ends (c.Done()), and the function that releases it (call it when the
// request is answered).
func Bound(ctx context.Context, c *paho.Client) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-c.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
