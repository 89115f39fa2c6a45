package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// kube-apiserver's CPU profile, per burst (-apiserver-profile): the same
// window from each variant's first create, so that the operator's profile
// read against the Application floor's (go tool pprof -diff_base) shows
// where kube-apiserver spends the CPU the operator adds, function by
// function. The profiles are kept in -work-dir for `go tool pprof`.

// profileAPIServer starts a CPU profile of kube-apiserver (its
// /debug/pprof/profile, on by default) of d and delivers it on the channel,
// nil when it failed (logged: a profile is an aid, not a figure).
func profileAPIServer(ctx context.Context, apiserver rest.Interface, d time.Duration) <-chan []byte {
	out := make(chan []byte, 1)
	go func() {
		data, err := apiserver.Get().AbsPath("/debug/pprof/profile").
			Param("seconds", strconv.Itoa(int(d.Seconds()))).DoRaw(ctx)
		if err != nil {
			logf("profiling kube-apiserver: %v", err)
			data = nil
		}
		out <- data
	}()
	return out
}

// profileTopNodes is how many functions the printed difference shows.
const profileTopNodes = 25

// renderProfiles writes every variant's kube-apiserver profile into
// -work-dir and, for each N, prints the first operator run's profile
// against the first Application floor run's (pairs where either started
// on a busy machine are skipped): `go tool pprof -top -diff_base`.
func (b *bench) renderProfiles(results []result) string {
	type pair struct{ op, floor string }
	pairs := map[int]*pair{}
	seen := map[string]int{}
	for _, r := range results {
		if len(r.apiserverProfile) == 0 {
			continue
		}
		key := fmt.Sprintf("%s-%d", fileName(r.variant), r.n)
		seen[key]++
		path := filepath.Join(b.cfg.workDir, fmt.Sprintf("%s-%d-apiserver-cpu.pprof", key, seen[key]))
		if err := os.WriteFile(path, r.apiserverProfile, 0o644); err != nil {
			logf("writing %s: %v", path, err)
			continue
		}
		if r.busy != "" {
			continue
		}
		if pairs[r.n] == nil {
			pairs[r.n] = &pair{}
		}
		p := pairs[r.n]
		switch {
		case r.variant == appFloorVariant && p.floor == "":
			p.floor = path
		case isOperator(r.variant) && p.op == "":
			p.op = path
		}
	}
	var sb strings.Builder
	for _, n := range slices.Sorted(maps.Keys(pairs)) {
		p := pairs[n]
		if p.op == "" || p.floor == "" {
			continue
		}
		out, err := exec.Command("go", "tool", "pprof", "-top", fmt.Sprintf("-nodecount=%d", profileTopNodes),
			"-diff_base="+p.floor, p.op).CombinedOutput()
		if err != nil {
			logf("go tool pprof: %v\n%s", err, out)
			continue
		}
		fmt.Fprintf(&sb, "kube-apiserver's CPU over the first %s of the burst (N=%d), the operator's run minus the "+
			"Application floor's (`go tool pprof -top -diff_base=%s %s`): positive is CPU the operator's run "+
			"added.\n\n```\n%s```\n\n", b.cfg.apiserverProfile, n, filepath.Base(p.floor), filepath.Base(p.op),
			profileRows(string(out)))
	}
	return strings.TrimSuffix(sb.String(), "\n\n")
}

// profileRows keeps pprof's summary line and its table, without the
// header lines naming the file and build.
func profileRows(out string) string {
	var sb strings.Builder
	for line := range strings.Lines(out) {
		if strings.HasPrefix(line, "File:") || strings.HasPrefix(line, "Build ID:") ||
			strings.HasPrefix(line, "Type:") || strings.HasPrefix(line, "Time:") {
			continue
		}
		sb.WriteString(line)
	}
	return sb.String()
}
