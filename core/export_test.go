package core

import "context"

// HoldCreates makes the client call hold before each message of creates it
// sends, with one message on its way at a time, so that a test can gather
// calls into the next one.
func HoldCreates(c *Client, hold func()) {
	c.creates = c.newCreateBatcher(1, func(ctx context.Context, specs []Spec) ([]createOutcome, error) {
		hold()
		return c.sendCreates(ctx, specs)
	})
}

// CreatesWaiting is how many creates wait for a message.
func CreatesWaiting(c *Client) int { return c.creates.Waiting() }
