package main

import (
	"bytes"
	"math"
	"strings"
	"testing"

	"github.com/google/pprof/profile"
)

// cpuProfile builds a CPU profile whose samples have the given stacks
// (leaf first) and CPU milliseconds.
func cpuProfile(t *testing.T, stacks [][]string, ms []int64) []byte {
	t.Helper()
	p := &profile.Profile{
		SampleType: []*profile.ValueType{{Type: "samples", Unit: "count"}, {Type: "cpu", Unit: "nanoseconds"}},
		PeriodType: &profile.ValueType{Type: "cpu", Unit: "nanoseconds"},
		Period:     10_000_000,
	}
	functions := map[string]*profile.Function{}
	for i, stack := range stacks {
		s := &profile.Sample{Value: []int64{1, ms[i] * 1_000_000}}
		for _, name := range stack {
			f := functions[name]
			if f == nil {
				f = &profile.Function{ID: uint64(len(functions) + 1), Name: name}
				functions[name] = f
				p.Function = append(p.Function, f)
			}
			loc := &profile.Location{ID: uint64(len(p.Location) + 1), Line: []profile.Line{{Function: f}}}
			p.Location = append(p.Location, loc)
			s.Location = append(s.Location, loc)
		}
		p.Sample = append(p.Sample, s)
	}
	var buf bytes.Buffer
	if err := p.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestProfileParts(t *testing.T) {
	const (
		patch   = "k8s.io/apiserver/pkg/endpoints/handlers.PatchResource.func1"
		create  = "k8s.io/apiserver/pkg/endpoints/handlers.CreateResource.createHandler.func1"
		authz   = "k8s.io/apiserver/pkg/endpoints/filters.withAuthorization.func1"
		webhook = "k8s.io/apiserver/pkg/admission/plugin/webhook/validating.(*Plugin).Validate"
	)
	data := cpuProfile(t, [][]string{
		// An apply's YAML under the patch handler: server-side apply's own.
		{"go.yaml.in/yaml/v2.unmarshal", "sigs.k8s.io/yaml.unmarshal",
			"k8s.io/apiserver/pkg/endpoints/handlers.(*applyPatcher).createNewObject", patch, authz},
		// The rest of a patch.
		{"k8s.io/apiserver/pkg/storage/etcd3.(*store).GuaranteedUpdate", patch, authz},
		// A create's admission webhook call: the webhook, not the create.
		{"net/http.(*Client).Do", webhook, create, authz},
		{"encoding/json.Marshal", create, authz},
		// The authorizer itself, not a handler below it.
		{"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac.(*RBACAuthorizer).Authorize", authz},
		{"compress/flate.(*compressor).syncFlush", "k8s.io/apiserver/pkg/endpoints/handlers.(*WatchServer).HandleHTTP"},
		{"runtime.scanobject", "runtime.gcDrain", "runtime.gcBgMarkWorker"},
		{"runtime.futex"},
	}, []int64{30, 50, 20, 40, 10, 5, 7, 3})
	got, err := profileParts(data)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]float64{
		"server-side apply's own work (the patch's YAML, the applied fields)": 0.030,
		"patches (applies and merge patches: the rest of their work)":         0.050,
		"admission webhooks (calls, and matching every request against them)": 0.020,
		"creates (POST)": 0.040,
		"authorization":  0.010,
		"gzip of responses (watch-lists since 1.37, large lists)": 0.005,
		"Go's garbage collector":                                  0.007,
		otherPart:                                                 0.003,
	}
	if len(got) != len(want) {
		t.Errorf("parts %v, want %v", got, want)
	}
	for name, w := range want {
		if math.Abs(got[name]-w) > 1e-9 {
			t.Errorf("%s: %.3f s, want %.3f", name, got[name], w)
		}
	}
}

func TestRenderProfileParts(t *testing.T) {
	b := &bench{cfg: &config{apiserverProfile: 30e9}}
	data := cpuProfile(t, [][]string{{"k8s.io/apiserver/pkg/endpoints/handlers.CreateResource.func1"}}, []int64{2000})
	out := b.renderProfileParts([]result{
		{variant: appFloorVariant, n: 1000, apiserverProfile: data},
		{variant: "operator", n: 1000},
	})
	for _, want := range []string{"over the first 30s of each burst (N=1000)", "| creates (POST) | 2.00 |", "| all | **2.00** |"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "| operator") {
		t.Errorf("a run without a profile got a column:\n%s", out)
	}
}
