// Package flaghint answers a flag a command does not take, typed from
// another tool's habits (tcpdump, ibdump, tshark), with what to type
// instead: pflag's "unknown flag" error with a hint after it.
package flaghint

import (
	"errors"
	"fmt"

	"github.com/spf13/pflag"
)

// Hints are the hints for flags a command does not take, by long name
// (--name) and by letter (-x).
type Hints struct {
	Long  map[string]string
	Short map[byte]string
}

// For returns the hint for err when it is pflag's unknown-flag error for
// a flag Hints names, "" otherwise.
func (h Hints) For(err error) string {
	var unknown *pflag.NotExistError
	if !errors.As(err, &unknown) {
		return ""
	}
	name := unknown.GetSpecifiedName()
	switch {
	case name == "":
		return ""
	case unknown.GetSpecifiedShortnames() == "":
		return h.Long[name]
	}
	return h.Short[name[0]]
}

// Add returns err with hint after it in parentheses; err itself when hint
// is "".
func Add(err error, hint string) error {
	if hint == "" {
		return err
	}
	return fmt.Errorf("%w (%s)", err, hint)
}
