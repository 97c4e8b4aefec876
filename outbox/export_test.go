package outbox

// SetAfterCreate sets the hook that runs between a batch's create and its
// delete; an error from it abandons the batch as a crash there would.
func (r *Relay) SetAfterCreate(fn func() error) { r.afterCreate = fn }
