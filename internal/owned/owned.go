// Package owned holds the last step of every Open of trellis's SQL savers and stores: Open opens
// a database handle, hands it to New, and then either owns it (Close will close it) or, when New
// failed, closes it, so that a failed Open leaks no connection.
package owned

// Open returns v, which New made (or failed to make, err) on a handle Open opened: on success
// own marks v as the handle's owner; on failure closeHandle closes the handle.
func Open[T any](v T, err error, closeHandle func(), own func(T)) (T, error) {
	if err != nil {
		closeHandle()
		var zero T
		return zero, err
	}
	own(v)
	return v, nil
}
