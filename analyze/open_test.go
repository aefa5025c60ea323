package analyze_test

import (
	"testing"

	"github.com/ibscope/ibscope/analyze"
)

// openT opens paths as one stream, closed when the test ends.
func openT(t testing.TB, paths ...string) *analyze.Stream {
	t.Helper()
	s, err := analyze.OpenStream(paths, analyze.StreamOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// files opens paths for analyze.Credits.
func files(paths ...string) analyze.Opener { return analyze.Files(paths, analyze.StreamOptions{}) }
