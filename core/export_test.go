package core

import "github.com/kuebus/kuebus/bus"

// HoldCreates makes the client call hold before each message of creates it
// sends, so that a test can gather calls into the next one.
func HoldCreates(c *Client, hold func()) {
	flush := c.sendCreates
	c.creates = bus.NewBatcher(bus.BatcherConfig[Spec, created]{
		Senders: 1, MaxItems: createMaxSpecs, Stopped: bus.ErrUnavailable,
		Flush: func(specs []Spec) ([]created, error) { hold(); return flush(specs) },
	})
}

// CreatesWaiting is how many creates wait for a message.
func CreatesWaiting(c *Client) int { return c.creates.Waiting() }
