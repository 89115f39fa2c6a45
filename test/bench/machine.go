package main

import (
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"time"

	"k8s.io/client-go/rest"
)

// machineCPU is a reading of /proc/stat: the CPU time the whole machine has
// spent busy (every process: the control plane, kwok, the controller, the
// benchmark itself) and the time all its CPUs had, in seconds.
type machineCPU struct{ busy, total float64 }

func readMachineCPU() (machineCPU, error) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return machineCPU{}, err
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return machineCPU{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	// user nice system idle iowait irq softirq steal ...; guest time is
	// already counted in user.
	var m machineCPU
	for i, s := range f[1:min(len(f), 9)] {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return machineCPU{}, err
		}
		v /= 100 // USER_HZ is 100 on Linux
		m.total += v
		if i != 3 && i != 4 { // idle, iowait
			m.busy += v
		}
	}
	return m, nil
}

// since returns the busy CPU seconds between m0 and m, and their share of
// the time all CPUs had.
func (m machineCPU) since(m0 machineCPU) (busy, share float64) {
	busy = m.busy - m0.busy
	if total := m.total - m0.total; total > 0 {
		share = busy / total
	}
	return busy, share
}

// procTime is one process's command name and the user+system CPU seconds
// it has used so far.
type procTime struct {
	name string
	cpu  float64
}

// processCPU returns the CPU time of every live process, by pid
// (/proc/<pid>/stat).
func processCPU() map[int]procTime {
	out := map[int]procTime{}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return out
	}
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		if name, cpu, ok := parseProcStat(string(data)); ok {
			out[pid] = procTime{name: name, cpu: cpu}
		}
	}
	return out
}

// parseProcStat returns the command name and the user+system CPU seconds
// of a /proc/<pid>/stat line.
func parseProcStat(s string) (name string, cpu float64, ok bool) {
	// The command name, in parentheses, may hold spaces and parentheses.
	open, closing := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || closing < open || closing+2 > len(s) {
		return "", 0, false
	}
	f := strings.Fields(s[closing+2:])
	if len(f) < 13 {
		return "", 0, false
	}
	utime, err1 := strconv.ParseFloat(f[11], 64)
	stime, err2 := strconv.ParseFloat(f[12], 64)
	if err1 != nil || err2 != nil {
		return "", 0, false
	}
	return s[open+1 : closing], (utime + stime) / 100, true // USER_HZ is 100 on Linux
}

// cpuByProcess is the CPU seconds each command used between two
// processCPU readings, summed by its name in the later one, for the
// commands that used at least 0.5 s. Time is taken by pid: a kernel worker
// renames itself after the work it does (kworker/u8:3-events, then
// kworker/u8:3-ext4-rsv-conversion), which by name alone would count its
// whole life as new. A pid absent before, or reused (its time went
// down), counts from 0; a process that exited meanwhile is not counted.
func cpuByProcess(before, after map[int]procTime) map[string]float64 {
	sums := map[string]float64{}
	for pid, a := range after {
		d := a.cpu - before[pid].cpu
		if d < 0 {
			d = a.cpu
		}
		sums[a.name] += d
	}
	out := map[string]float64{}
	for name, d := range sums {
		if d >= 0.5 {
			out[name] = d
		}
	}
	return out
}

// cpuSpan is the start of a measurement: the machine's and every
// process's CPU time at that moment, and the requests kube-apiserver had
// served and its admission webhooks' latency histograms.
type cpuSpan struct {
	start     time.Time
	machine   machineCPU
	processes map[int]procTime
	apiserver rest.Interface
	reading   apiserverReading
	// queues is what kube-controller-manager's work queues had done
	// (queues.go).
	queues queueReading
	// profile delivers kube-apiserver's CPU profile of the span's start
	// (profile.go), when one was asked for.
	profile <-chan []byte
}

// startCPUSpan reads the CPU times and apiserver's /metrics and, when
// profile is not 0, starts a CPU profile of kube-apiserver that long.
func startCPUSpan(ctx context.Context, apiserver rest.Interface, profile time.Duration) (cpuSpan, error) {
	s, err := startCPU()
	if err != nil {
		return cpuSpan{}, err
	}
	s.apiserver = apiserver
	if s.reading, err = readAPIServer(ctx, apiserver); err != nil {
		return s, err
	}
	if s.queues, err = readQueues(ctx); err != nil {
		return s, err
	}
	if profile > 0 {
		s.profile = profileAPIServer(ctx, apiserver, profile)
	}
	return s, nil
}

// startCPU reads the CPU times only: a span for phase, which does not
// scrape kube-apiserver's /metrics (that read would be load in the phase
// it measures).
func startCPU() (cpuSpan, error) {
	m, err := readMachineCPU()
	if err != nil {
		return cpuSpan{}, err
	}
	return cpuSpan{start: time.Now(), machine: m, processes: processCPU()}, nil
}

// end records in r the machine's busy CPU seconds and share, the CPU
// seconds of each busy process, the requests kube-apiserver served, the
// admission webhook calls it timed and the work of kube-controller-manager's
// queues, since s.
func (s cpuSpan) end(ctx context.Context, r *result) error {
	m, err := readMachineCPU()
	if err != nil {
		return err
	}
	r.machineBusy, r.machineShare = m.since(s.machine)
	r.processes = cpuByProcess(s.processes, processCPU())
	reading, err := readAPIServer(ctx, s.apiserver)
	if err != nil {
		return err
	}
	r.requests = requestsSince(s.reading.requests, reading.requests)
	r.webhooks = webhooksSince(s.reading.webhooks, reading.webhooks)
	r.watches = watchesSince(s.reading.watches, reading.watches)
	queues, err := readQueues(ctx)
	if err != nil {
		return err
	}
	r.queues = queuesSince(s.queues, queues)
	if s.profile != nil {
		r.apiserverProfile = <-s.profile
	}
	return nil
}

// phaseCPU is where the machine's CPU went during one phase of the
// steady-rate mode (first create to the last item ready): the phase's wall
// time, the machine's busy share and each busy process's CPU seconds.
type phaseCPU struct {
	phase     string
	wall      time.Duration
	share     float64
	processes map[string]float64
}

// phase returns the CPU the machine and each process used since s.
func (s cpuSpan) phase(name string) (phaseCPU, error) {
	m, err := readMachineCPU()
	if err != nil {
		return phaseCPU{}, err
	}
	_, share := m.since(s.machine)
	return phaseCPU{phase: name, wall: time.Since(s.start), share: share,
		processes: cpuByProcess(s.processes, processCPU())}, nil
}

const (
	// quietShare is the machine's busy share under which it counts as
	// quiet: the idle control plane, kwok and the operator use a few %.
	quietShare = 0.15
)

// waitQuiet waits until the machine has been quiet (under quietShare busy)
// for two consecutive seconds, so that a variant neither pays for the
// previous one's clean-up (the namespace controller and the garbage
// collector deleting a thousand of everything) nor for a controller's
// start-up. It gives up after timeout; it returns how long it waited,
// the last second's busy share and whether the machine got quiet: when not,
// the variant is measured on a busy machine and compares with nothing
// (result.busy).
func waitQuiet(ctx context.Context, timeout time.Duration) (time.Duration, float64, bool, error) {
	start := time.Now()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	prev, err := readMachineCPU()
	if err != nil {
		return 0, 0, false, err
	}
	quiet := 0
	for {
		select {
		case <-ctx.Done():
			return time.Since(start), 0, false, ctx.Err()
		case <-tick.C:
		}
		now, err := readMachineCPU()
		if err != nil {
			return time.Since(start), 0, false, err
		}
		_, share := now.since(prev)
		prev = now
		if share < quietShare {
			quiet++
		} else {
			quiet = 0
		}
		if quiet == 2 || time.Since(start) > timeout {
			return time.Since(start), share, quiet == 2, nil
		}
	}
}
