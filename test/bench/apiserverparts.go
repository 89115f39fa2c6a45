package main

import (
	"bytes"
	"fmt"
	"regexp"
	"strings"

	"github.com/google/pprof/profile"
)

// kube-apiserver's CPU profile of each burst, summed by part: where the
// API server's CPU went, per Application, for every variant side by side.
// The operator's column against the Application floor's is the operator's
// extra cost on the API server explained by part (its server-side applies,
// the admission webhook it serves, gzip, its watches), which the function
// by function difference below it (renderProfiles) cannot show in a
// sentence. A sample goes to the first part (in apiserverParts' order) one
// of whose frames it passes through, so a part that is a caller of another
// comes after it.

// apiserverPart is one line of the table: a name for a person and the
// function names (Go's, as in the profile) whose samples it sums.
type apiserverPart struct {
	name  string
	frame *regexp.Regexp
}

var apiserverParts = []apiserverPart{
	{"admission webhooks (calls, and matching every request against them)",
		regexp.MustCompile(`^k8s\.io/apiserver/pkg/admission/plugin/webhook/`)},
	{"gzip of responses (watch-lists since 1.37, large lists)", regexp.MustCompile(`^compress/(flate|gzip)\.`)},
	{"server-side apply's own work (the patch's YAML, the applied fields)",
		regexp.MustCompile(`\(\*applyPatcher\)|^sigs\.k8s\.io/yaml\.|managedfields/internal\.\(\*FieldManager\)\.Apply$`)},
	{"status writes of custom resources (Applications)",
		regexp.MustCompile(`customresource\.\(\*StatusREST\)\.Update$`)},
	{"creates (POST)", regexp.MustCompile(`[.)]CreateResource`)},
	{"patches (applies and merge patches: the rest of their work)",
		regexp.MustCompile(`[.)]PatchResource|handlers\.\(\*patcher\)`)},
	{"updates (PUT, status updates of kube-controller-manager)", regexp.MustCompile(`[.)]UpdateResource`)},
	{"deletes", regexp.MustCompile(`[.)]DeleteResource|[.)]DeleteCollection`)},
	{"watches (the watch cache, serving and fanning out events)",
		regexp.MustCompile(`handlers\.\(\*WatchServer\)|handlers\.serveWatch|cacher\.\(\*(Cacher|cacheWatcher|watchCache)\)|etcd3\.\(\*watchChan\)`)},
	{"etcd client (gRPC)", regexp.MustCompile(`^google\.golang\.org/grpc\.|^google\.golang\.org/grpc/|^go\.etcd\.io/`)},
	{"lists and gets", regexp.MustCompile(`[.)]ListResource|[.)]GetResource|handlers\.getResourceHandler`)},
	{"authorization", regexp.MustCompile(`authorizer|/rbac\.`)},
	{"authentication and TLS", regexp.MustCompile(`authentication|^crypto/tls\.`)},
	{"Go's garbage collector", regexp.MustCompile(`^runtime\.(gcBgMarkWorker|bgsweep|bgscavenge)$`)},
}

// otherPart sums the samples of no part.
const otherPart = "other"

// profileParts returns the CPU seconds of a CPU profile by part name.
func profileParts(data []byte) (map[string]float64, error) {
	p, err := profile.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("reading the profile: %w", err)
	}
	cpu := -1
	for i, st := range p.SampleType {
		if st.Type == "cpu" && st.Unit == "nanoseconds" {
			cpu = i
		}
	}
	if cpu < 0 {
		return nil, fmt.Errorf("the profile has no cpu/nanoseconds sample type")
	}
	parts := map[string]float64{}
	for _, s := range p.Sample {
		parts[samplePart(s)] += float64(s.Value[cpu]) / 1e9
	}
	return parts, nil
}

// samplePart returns the part s belongs to.
func samplePart(s *profile.Sample) string {
	for _, part := range apiserverParts {
		for _, loc := range s.Location {
			for _, line := range loc.Line {
				if line.Function != nil && part.frame.MatchString(line.Function.Name) {
					return part.name
				}
			}
		}
	}
	return otherPart
}

// renderProfileParts prints, for each N, kube-apiserver's profiled CPU by
// part in ms per Application, a column per run with a profile.
func (b *bench) renderProfileParts(results []result) string {
	var sb strings.Builder
	ns, byN := resultsByN(results, func(r result) bool { return len(r.apiserverProfile) > 0 })
	for _, n := range ns {
		var rs []result
		var parts []map[string]float64
		for _, r := range byN[n] {
			p, err := profileParts(r.apiserverProfile)
			if err != nil {
				logf("kube-apiserver's profile of %s: %v", r.name(), err)
				continue
			}
			rs, parts = append(rs, r), append(parts, p)
		}
		if len(rs) == 0 {
			continue
		}
		fmt.Fprintf(&sb, "kube-apiserver's CPU profile over the first %s of each burst (N=%d) by part, ms per "+
			"Application (a sample counts in the first part it passes through; the profiles are in the work "+
			"directory):\n\n", b.cfg.apiserverProfile, n)
		writeVariantColumns(&sb, "part", rs)
		names := make([]string, 0, len(apiserverParts)+1)
		for _, part := range apiserverParts {
			names = append(names, part.name)
		}
		for _, name := range append(names, otherPart) {
			fmt.Fprintf(&sb, "| %s |", name)
			for _, p := range parts {
				fmt.Fprintf(&sb, " %.2f |", p[name]*1000/float64(n))
			}
			sb.WriteString("\n")
		}
		sb.WriteString("| all |")
		for _, p := range parts {
			var all float64
			for _, v := range p {
				all += v
			}
			fmt.Fprintf(&sb, " **%.2f** |", all*1000/float64(n))
		}
		sb.WriteString("\n\n")
	}
	return strings.TrimSuffix(sb.String(), "\n\n")
}
