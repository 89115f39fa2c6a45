package certs_test

import (
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-logr/logr/funcr"
	ctrl "sigs.k8s.io/controller-runtime"
)

// noCA counts, for each file, the checks of the CA publisher that found no
// CA there ("No CA to publish"). The package's runnables log through the
// global logger (ctrl.LoggerFrom of the manager's context), so it records
// every test's managers; the file, a test's own temporary directory, tells
// them apart.
var noCA = &checkLog{counts: map[string]int{}}

func TestMain(m *testing.M) {
	ctrl.SetLogger(funcr.New(noCA.record, funcr.Options{Verbosity: 1}))
	os.Exit(m.Run())
}

type checkLog struct {
	mu     sync.Mutex
	counts map[string]int
}

// record is funcr's output function: args is the entry's key/value pairs,
// each value as JSON.
func (l *checkLog) record(_, args string) {
	const msg, file = `"msg"="No CA to publish"`, `"file"=`
	_, rest, found := strings.Cut(args, file)
	if !found || !strings.Contains(args, msg) {
		return
	}
	path, err := strconv.QuotedPrefix(rest)
	if err != nil {
		return
	}
	path, _ = strconv.Unquote(path)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.counts[path]++
}

// checks returns how many checks found no CA at path.
func (l *checkLog) checks(path string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.counts[path]
}
