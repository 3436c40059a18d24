// Package exitcode holds the exit statuses agreed project-wide, as an
// error a command returns to choose its status: 0 ok, 1 failure, 2 usage,
// 3 a regression (compare), 4 some cells failed (run; the table and file
// still written), 5 the compare gate could not decide.
package exitcode

import "fmt"

// Code is an exit status, as an error ("exit 3") a command wraps with %w.
type Code int

// The statuses other than 0 and 1.
const (
	Usage       Code = 2
	Regression  Code = 3
	CellsFailed Code = 4
	Undecided   Code = 5
)

func (c Code) Error() string { return fmt.Sprintf("exit %d", int(c)) }

// status is an error that exits with code, its message unchanged.
type status struct {
	err  error
	code Code
}

func (e status) Error() string   { return e.err.Error() }
func (e status) Unwrap() []error { return []error{e.err, e.code} }

// With marks err to exit with code, its message unchanged; nil stays nil.
func With(err error, code Code) error {
	if err == nil {
		return nil
	}
	return status{err, code}
}
