package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseProcStat(t *testing.T) {
	tests := []struct {
		name, line string
		wantName   string
		wantCPU    float64
		wantOK     bool
	}{
		{name: "plain", line: "12 (etcd) S 1 12 12 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 12 0 100 0 0",
			wantName: "etcd", wantCPU: 3, wantOK: true},
		{name: "name with spaces and parentheses", line: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0",
			wantName: "a (b) c", wantCPU: 0.03, wantOK: true},
		{name: "truncated", line: "7 (x) R 1 7", wantOK: false},
		{name: "no name", line: "garbage", wantOK: false},
		{name: "not a number", line: "1 (x) S 1 1 1 0 -1 0 0 0 0 0 u s 0 0 20 0 1 0 1 0 0", wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name, cpu, ok := parseProcStat(tt.line)
			if ok != tt.wantOK || (ok && (name != tt.wantName || cpu != tt.wantCPU)) {
				t.Errorf("parseProcStat(%q) = %q, %v, %v; want %q, %v, %v",
					tt.line, name, cpu, ok, tt.wantName, tt.wantCPU, tt.wantOK)
			}
		})
	}
}

func TestMachineCPUSince(t *testing.T) {
	busy, share := machineCPU{busy: 30, total: 50}.since(machineCPU{busy: 10, total: 10})
	if busy != 20 || share != 0.5 {
		t.Errorf("since = %v, %v; want 20, 0.5", busy, share)
	}
	if _, share := (machineCPU{}).since(machineCPU{}); share != 0 {
		t.Errorf("share over no time = %v; want 0", share)
	}
}

func TestCPUByProcess(t *testing.T) {
	tests := []struct {
		name          string
		before, after map[int]procTime
		want          map[string]float64
	}{
		{name: "by name, at least 0.5 s",
			before: map[int]procTime{1: {"a", 1}, 2: {"b", 5}},
			after:  map[int]procTime{1: {"a", 3}, 2: {"b", 5.2}, 3: {"new", 0.7}},
			want:   map[string]float64{"a": 2, "new": 0.7}},
		{name: "a kernel worker renamed counts its time since, not its life",
			before: map[int]procTime{7: {"kworker/u8:3-events", 40}},
			after:  map[int]procTime{7: {"kworker/u8:3-ext4-rsv-conversion", 41}},
			want:   map[string]float64{"kworker/u8:3-ext4-rsv-conversion": 1}},
		{name: "same-name processes are summed; one that exited is not counted",
			before: map[int]procTime{1: {"sh", 10}, 2: {"sh", 0.2}},
			after:  map[int]procTime{2: {"sh", 0.5}, 3: {"sh", 0.4}},
			want:   map[string]float64{"sh": 0.7}},
		{name: "a reused pid counts from 0",
			before: map[int]procTime{5: {"old", 30}},
			after:  map[int]procTime{5: {"new", 2}},
			want:   map[string]float64{"new": 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := cpuByProcess(tt.before, tt.after)
			if len(got) != len(tt.want) {
				t.Fatalf("cpuByProcess = %v; want %v", got, tt.want)
			}
			for name, w := range tt.want {
				if math.Abs(got[name]-w) > 1e-9 {
					t.Errorf("cpuByProcess = %v; want %v", got, tt.want)
				}
			}
		})
	}
}

func TestRenderProcessesSumsTheRestAsOther(t *testing.T) {
	out := renderProcesses([]result{
		{n: 1000, variant: "operator", processes: map[string]float64{
			"kube-apiserver": 106.6, "etcd": 30.3, "manager": 16.3, "containerd": 7.0, "sshd": 4.9}},
		{n: 1000, variant: "floor (plain client)"},
	})
	want := "| 1000 | operator | 106.6 | 30.3 | - | - | - | 16.3 | - | 11.9 | 165.1 |"
	if !strings.Contains(out, want) {
		t.Errorf("renderProcesses lacks %q:\n%s", want, out)
	}
	if strings.Contains(out, "floor (plain client)") {
		t.Errorf("a run without CPU readings has a row:\n%s", out)
	}
}
