//go:build container

package container

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// podRun is one replica of the rendered Deployment's Pod, run with podman as
// a kubelet would run it: its init containers one after another to
// completion, then its containers, each in the Pod's network namespace.
// What a kubelet would do and this cannot is refused with an error naming
// the field, so a chart change the suite does not model fails it instead
// of running something else.
type podRun struct {
	name      string // the Pod's name, also its hostname
	namespace string
	spec      corev1.PodSpec
	image     string // the image loaded from the archive (must equal the spec's)
	network   string // the podman network
	apiHost   string // the address the API server is reached at from network
	apiPort   string
	// publish maps container ports to host ports on 127.0.0.1: how the
	// API server (a host process) reaches the webhook server.
	publish map[int32]int
	dir     string // host files: ServiceAccount, ConfigMap and Secret volumes
}

// files prepares what the kubelet would mount: the ServiceAccount token
// (TokenRequest), the cluster CA (the kube-root-ca.crt ConfigMap, as the
// kubelet's kube-api-access volume does) and namespace, and every
// ConfigMap and Secret volume, read-only, with their modes and the Pod's
// fsGroup as group.
func (p *podRun) volumeArgs(t *testing.T, c corev1.Container) []string {
	t.Helper()
	var args []string
	fsGroup := -1
	if sc := p.spec.SecurityContext; sc != nil && sc.FSGroup != nil {
		fsGroup = int(*sc.FSGroup)
	}
	volumes := map[string]corev1.Volume{}
	for _, v := range p.spec.Volumes {
		volumes[v.Name] = v
	}
	for _, m := range c.VolumeMounts {
		v, ok := volumes[m.Name]
		if !ok {
			t.Fatalf("container %s mounts volume %q that the Pod does not declare", c.Name, m.Name)
		}
		if m.SubPath != "" || m.SubPathExpr != "" || m.MountPropagation != nil {
			t.Fatalf("container %s, mount %s: subPath and mountPropagation are not modelled", c.Name, m.Name)
		}
		switch {
		case v.EmptyDir != nil:
			// Every emptyDir is a tmpfs of its sizeLimit, as the kubelet
			// makes a Memory one (a disk-backed one is a directory the
			// kubelet evicts the Pod for outgrowing). Shared by one container
			// only: an emptyDir two containers mount would need a volume
			// that outlives the init container.
			p.claimEmptyDir(t, v.Name, c.Name)
			if v.EmptyDir.SizeLimit == nil {
				t.Fatalf("emptyDir %s has no sizeLimit: the chart bounds every emptyDir", v.Name)
			}
			opts := fmt.Sprintf("type=tmpfs,destination=%s,tmpfs-size=%d,tmpfs-mode=0777",
				m.MountPath, v.EmptyDir.SizeLimit.Value())
			if m.ReadOnly {
				opts += ",ro=true"
			}
			args = append(args, "--mount", opts)
		case v.ConfigMap != nil:
			cm := &corev1.ConfigMap{}
			if err := admin.Get(ctx(), client.ObjectKey{Namespace: p.namespace, Name: v.ConfigMap.Name}, cm); err != nil {
				t.Fatalf("volume %s: ConfigMap %s: %v", v.Name, v.ConfigMap.Name, err)
			}
			data := map[string][]byte{}
			for k, s := range cm.Data {
				data[k] = []byte(s)
			}
			maps.Copy(data, cm.BinaryData)
			dir := p.writeVolume(t, c.Name, v.Name, data, v.ConfigMap.Items, v.ConfigMap.DefaultMode, fsGroup)
			args = append(args, "-v", dir+":"+m.MountPath+":ro")
		case v.Secret != nil:
			s := &corev1.Secret{}
			if err := admin.Get(ctx(), client.ObjectKey{Namespace: p.namespace, Name: v.Secret.SecretName}, s); err != nil {
				t.Fatalf("volume %s: Secret %s: %v", v.Name, v.Secret.SecretName, err)
			}
			dir := p.writeVolume(t, c.Name, v.Name, s.Data, v.Secret.Items, v.Secret.DefaultMode, fsGroup)
			args = append(args, "-v", dir+":"+m.MountPath+":ro")
		default:
			t.Fatalf("volume %s: only emptyDir, configMap and secret volumes are modelled", v.Name)
		}
	}
	if automount := p.spec.AutomountServiceAccountToken; automount == nil || *automount {
		args = append(args, "-v", p.serviceAccountDir(t, fsGroup)+":/var/run/secrets/kubernetes.io/serviceaccount:ro")
	}
	return args
}

var emptyDirUsers = map[string]string{}

func (p *podRun) claimEmptyDir(t *testing.T, volume, container string) {
	key := p.name + "/" + volume
	if other, ok := emptyDirUsers[key]; ok && other != container {
		t.Fatalf("emptyDir %s is mounted by containers %s and %s: sharing is not modelled", volume, other, container)
	}
	emptyDirUsers[key] = container
}

// writeVolume writes a ConfigMap's or Secret's keys as files (items: only
// those, at their paths) with the volume's mode, owned by root and the
// Pod's fsGroup, and returns their directory.
func (p *podRun) writeVolume(t *testing.T, container, volume string, data map[string][]byte,
	items []corev1.KeyToPath, defaultMode *int32, fsGroup int) string {
	t.Helper()
	dir := filepath.Join(p.dir, container, volume)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	mode := os.FileMode(0o644)
	if defaultMode != nil {
		mode = os.FileMode(*defaultMode)
	}
	write := func(path string, b []byte, m os.FileMode) {
		f := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(f, b, m); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, m); err != nil { // past the umask
			t.Fatal(err)
		}
		if fsGroup >= 0 {
			if err := os.Chown(f, 0, fsGroup); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(items) == 0 {
		for k, b := range data {
			write(k, b, mode)
		}
		return dir
	}
	for _, it := range items {
		b, ok := data[it.Key]
		if !ok {
			t.Fatalf("volume %s: key %s is missing", volume, it.Key)
		}
		m := mode
		if it.Mode != nil {
			m = os.FileMode(*it.Mode)
		}
		write(it.Path, b, m)
	}
	return dir
}

// serviceAccountDir writes the kubelet's kube-api-access volume: a token
// of the Pod's ServiceAccount from the TokenRequest API, the cluster's CA
// as the root CA publisher puts it in every namespace, and the namespace.
func (p *podRun) serviceAccountDir(t *testing.T, fsGroup int) string {
	t.Helper()
	sa := p.spec.ServiceAccountName
	if sa == "" {
		sa = "default"
	}
	token := strings.TrimSpace(mustRun(t, kubectl, "create", "token", sa, "-n", p.namespace, "--duration=1h"))
	ca := &corev1.ConfigMap{}
	if err := admin.Get(ctx(), client.ObjectKey{Namespace: p.namespace, Name: "kube-root-ca.crt"}, ca); err != nil {
		t.Fatalf("the cluster CA (ConfigMap kube-root-ca.crt in %s): %v", p.namespace, err)
	}
	return p.writeVolume(t, "", "kube-api-access", map[string][]byte{
		"token":     []byte(token),
		"ca.crt":    []byte(ca.Data["ca.crt"]),
		"namespace": []byte(p.namespace),
	}, nil, nil, fsGroup)
}

// securityArgs turns the Pod's and the container's securityContext into
// podman's flags; the container's fields win, as in Kubernetes.
func (p *podRun) securityArgs(t *testing.T, c corev1.Container) []string {
	t.Helper()
	pod := p.spec.SecurityContext
	if pod == nil {
		pod = &corev1.PodSecurityContext{}
	}
	sc := c.SecurityContext
	if sc == nil {
		sc = &corev1.SecurityContext{}
	}
	uid, gid := sc.RunAsUser, sc.RunAsGroup
	if uid == nil {
		uid = pod.RunAsUser
	}
	if gid == nil {
		gid = pod.RunAsGroup
	}
	nonRoot := sc.RunAsNonRoot
	if nonRoot == nil {
		nonRoot = pod.RunAsNonRoot
	}
	var args []string
	switch {
	case uid != nil && gid != nil:
		args = append(args, "--user", fmt.Sprintf("%d:%d", *uid, *gid))
	case uid != nil:
		args = append(args, "--user", strconv.FormatInt(*uid, 10))
	case gid != nil:
		t.Fatalf("container %s: runAsGroup without runAsUser is not modelled", c.Name)
	}
	if nonRoot != nil && *nonRoot && uid != nil && *uid == 0 {
		t.Fatalf("container %s: runAsNonRoot with runAsUser 0: the kubelet refuses to start it", c.Name)
	}
	// runAsNonRoot without runAsUser: the image's user, checked below
	// (imageUserIsNonRoot) as the kubelet does.
	if pod.FSGroup != nil {
		args = append(args, "--group-add", strconv.FormatInt(*pod.FSGroup, 10))
	}
	for _, g := range pod.SupplementalGroups {
		args = append(args, "--group-add", strconv.FormatInt(g, 10))
	}
	if sc.ReadOnlyRootFilesystem != nil && *sc.ReadOnlyRootFilesystem {
		// podman would otherwise mount writable tmpfs on /tmp, /var/tmp
		// and /run, which a Pod does not have.
		args = append(args, "--read-only", "--read-only-tmpfs=false")
	}
	if sc.AllowPrivilegeEscalation != nil && !*sc.AllowPrivilegeEscalation {
		args = append(args, "--security-opt", "no-new-privileges")
	}
	if sc.Privileged != nil && *sc.Privileged {
		t.Fatalf("container %s: privileged is not modelled", c.Name)
	}
	if caps := sc.Capabilities; caps != nil {
		for _, d := range caps.Drop {
			args = append(args, "--cap-drop", string(d))
		}
		for _, a := range caps.Add {
			args = append(args, "--cap-add", string(a))
		}
	}
	seccomp := sc.SeccompProfile
	if seccomp == nil {
		seccomp = pod.SeccompProfile
	}
	switch {
	case seccomp == nil || seccomp.Type == corev1.SeccompProfileTypeUnconfined:
		// The kubelet's default is Unconfined.
		args = append(args, "--security-opt", "seccomp=unconfined")
	case seccomp.Type == corev1.SeccompProfileTypeRuntimeDefault:
		// podman's default profile, as containerd's and CRI-O's.
	default:
		t.Fatalf("container %s: seccompProfile %s is not modelled", c.Name, seccomp.Type)
	}
	return args
}

// envArgs sets the container's env (values, and the downward API's Pod
// fields) and the kubelet's variables for the kubernetes Service, through
// which client-go's in-cluster config reaches the API server.
func (p *podRun) envArgs(t *testing.T, c corev1.Container) []string {
	t.Helper()
	if len(c.EnvFrom) > 0 {
		t.Fatalf("container %s: envFrom is not modelled", c.Name)
	}
	args := make([]string, 0, 6+2*len(c.Env))
	args = append(args,
		"--env", "KUBERNETES_SERVICE_HOST="+p.apiHost,
		"--env", "KUBERNETES_SERVICE_PORT="+p.apiPort,
		"--env", "KUBERNETES_SERVICE_PORT_HTTPS="+p.apiPort)
	for _, e := range c.Env {
		value := e.Value
		if from := e.ValueFrom; from != nil {
			if from.FieldRef == nil {
				t.Fatalf("container %s, env %s: only fieldRef is modelled", c.Name, e.Name)
			}
			switch from.FieldRef.FieldPath {
			case "metadata.namespace":
				value = p.namespace
			case "metadata.name":
				value = p.name
			case "spec.serviceAccountName":
				value = p.spec.ServiceAccountName
			default:
				t.Fatalf("container %s, env %s: fieldRef %s is not modelled", c.Name, e.Name, from.FieldRef.FieldPath)
			}
		}
		args = append(args, "--env", e.Name+"="+value)
	}
	return args
}

// containerArgs is `podman run`'s flags for container c of the Pod.
func (p *podRun) containerArgs(t *testing.T, c corev1.Container, init bool) []string {
	t.Helper()
	if c.Image != p.image {
		t.Fatalf("container %s runs image %s, the suite loaded %s", c.Name, c.Image, p.image)
	}
	if c.WorkingDir != "" || c.TTY || c.Stdin {
		t.Fatalf("container %s: workingDir, tty and stdin are not modelled", c.Name)
	}
	args := []string{
		"--runtime", "runc", "--pull=never",
		"--name", containerName(p.name, c.Name),
		"--hostname", p.name,
		"--network", p.network,
		// kubernetes.default.svc is in the API server's certificate;
		// KUBERNETES_SERVICE_HOST names it, as the Service's address would be.
		"--add-host", p.apiHost + ":" + apiServerFromNetwork,
		// The machine's hard limits; the kubelet gives the runtime's.
		"--ulimit", "nofile=1024:1024", "--ulimit", "nproc=1024:1024",
		"--label", "sunstrider.cn/container-suite=" + clusterName,
	}
	// The kubelet sets no DNS resolution here worth modelling: cluster DNS
	// (ClusterFirst) does not exist on this cluster.
	args = append(args, p.securityArgs(t, c)...)
	args = append(args, p.envArgs(t, c)...)
	args = append(args, p.volumeArgs(t, c)...)
	if lim := c.Resources.Limits; lim != nil {
		if m, ok := lim[corev1.ResourceMemory]; ok {
			args = append(args, "--memory", strconv.FormatInt(m.Value(), 10))
		}
		if cpu, ok := lim[corev1.ResourceCPU]; ok {
			args = append(args, "--cpus", strconv.FormatFloat(float64(cpu.MilliValue())/1000, 'f', 3, 64))
		}
	}
	if !init {
		for _, port := range c.Ports {
			if host, ok := p.publish[port.ContainerPort]; ok {
				args = append(args, "-p", fmt.Sprintf("127.0.0.1:%d:%d/%s", host, port.ContainerPort,
					strings.ToLower(string(port.Protocol))))
			}
		}
	}
	if len(c.Command) > 0 {
		// command replaces the image's entrypoint and, as in Kubernetes,
		// drops its CMD: args alone follow.
		entrypoint, _ := json.Marshal(c.Command)
		args = append(args, "--entrypoint", string(entrypoint))
	}
	args = append(args, c.Image)
	return append(args, c.Args...)
}

func containerName(pod, container string) string { return clusterName + "-" + pod + "-" + container }

// runInit runs an init container to completion: it must exit 0.
func (p *podRun) runInit(t *testing.T, c corev1.Container) {
	t.Helper()
	out, err := p.runToEnd(t, c)
	if err != nil {
		t.Fatalf("init container %s of %s: %v\n%s", c.Name, p.name, err, out)
	}
	t.Logf("init container %s of %s exited 0:\n%s", c.Name, p.name, indent(out))
}

// runToEnd runs a container in the foreground (no ports published) and
// returns its output and podman's error, an *exec.ExitError holding the
// container's exit code when it is not 0.
func (p *podRun) runToEnd(t *testing.T, c corev1.Container) (string, error) {
	t.Helper()
	name := containerName(p.name, c.Name)
	t.Cleanup(func() { removeContainer(name) })
	args := append([]string{"run"}, p.containerArgs(t, c, true)...)
	return podmanCmd(args...)
}

// start starts a container in the background and returns its address in
// the network, the Pod's IP a kubelet probes.
func (p *podRun) start(t *testing.T, c corev1.Container) string {
	t.Helper()
	name := containerName(p.name, c.Name)
	t.Cleanup(func() { removeContainer(name) })
	args := append([]string{"run", "--detach"}, p.containerArgs(t, c, false)...)
	if out, err := podmanCmd(args...); err != nil {
		t.Fatalf("starting %s of %s: %v\n%s", c.Name, p.name, err, out)
	}
	ip := strings.TrimSpace(mustPodman(t, "inspect", "--format",
		fmt.Sprintf(`{{ (index .NetworkSettings.Networks %q).IPAddress }}`, p.network), name))
	if net.ParseIP(ip) == nil {
		t.Fatalf("%s has no address in network %s: %q", name, p.network, ip)
	}
	return ip
}

// prober polls a container's readiness and liveness probes as the kubelet
// does: after initialDelaySeconds, every periodSeconds, an HTTP GET with
// timeoutSeconds; 200-399 succeeds; successThreshold successes in a row
// make it ready, failureThreshold failures in a row unready (readiness) or
// killed (liveness: recorded, the suite fails).
type prober struct {
	mu                sync.Mutex
	ready             bool
	liveSuccesses     int
	livenessFailed    string // why the kubelet would have restarted it
	lastReadiness     string
	cancel            context.CancelFunc
	readyProbe, alive *corev1.Probe
}

func (p *prober) state() (ready bool, liveSuccesses int, livenessFailed, last string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ready, p.liveSuccesses, p.livenessFailed, p.lastReadiness
}

func startProber(t *testing.T, c corev1.Container, ip string) *prober {
	t.Helper()
	if c.ReadinessProbe == nil || c.LivenessProbe == nil {
		t.Fatalf("container %s has no readiness or liveness probe", c.Name)
	}
	ctx, cancel := context.WithCancel(context.Background())
	pr := &prober{cancel: cancel, readyProbe: c.ReadinessProbe, alive: c.LivenessProbe}
	t.Cleanup(cancel)
	urlOf := func(probe *corev1.Probe) string {
		h := probe.HTTPGet
		if h == nil {
			t.Fatalf("container %s: only httpGet probes are modelled", c.Name)
		}
		port := portOf(t, c, h.Port)
		scheme := "http"
		if h.Scheme == corev1.URISchemeHTTPS {
			scheme = "https" // the kubelet does not verify the certificate
		}
		return fmt.Sprintf("%s://%s%s", scheme, net.JoinHostPort(ip, strconv.Itoa(int(port))), h.Path)
	}
	run := func(probe *corev1.Probe, url string, record func(ok bool, msg string)) {
		period := 10 * time.Second // the kubelet's default
		if probe.PeriodSeconds > 0 {
			period = time.Duration(probe.PeriodSeconds) * time.Second
		}
		timeout := time.Duration(max(probe.TimeoutSeconds, 1)) * time.Second
		hc := &http.Client{Timeout: timeout}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Duration(probe.InitialDelaySeconds) * time.Second):
		}
		tick := time.NewTicker(period)
		defer tick.Stop()
		for {
			resp, err := hc.Get(url)
			switch {
			case err != nil:
				record(false, err.Error())
			default:
				_ = resp.Body.Close()
				record(resp.StatusCode >= 200 && resp.StatusCode < 400, url+": "+resp.Status)
			}
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
	}
	threshold := func(v, def int32) int {
		if v <= 0 {
			return int(def)
		}
		return int(v)
	}
	readyURL, liveURL := urlOf(c.ReadinessProbe), urlOf(c.LivenessProbe)
	var rOK, rFail, lFail int
	go run(c.ReadinessProbe, readyURL, func(ok bool, msg string) {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		pr.lastReadiness = msg
		if ok {
			rOK, rFail = rOK+1, 0
			if rOK >= threshold(c.ReadinessProbe.SuccessThreshold, 1) {
				pr.ready = true
			}
		} else {
			rOK, rFail = 0, rFail+1
			if rFail >= threshold(c.ReadinessProbe.FailureThreshold, 3) {
				pr.ready = false
			}
		}
	})
	go run(c.LivenessProbe, liveURL, func(ok bool, msg string) {
		pr.mu.Lock()
		defer pr.mu.Unlock()
		if ok {
			pr.liveSuccesses++
			lFail = 0
			return
		}
		lFail++
		if lFail >= threshold(c.LivenessProbe.FailureThreshold, 3) && pr.livenessFailed == "" {
			pr.livenessFailed = fmt.Sprintf("%d liveness failures in a row, last: %s", lFail, msg)
		}
	})
	return pr
}

// portOf resolves a probe's port, a number or a container port's name.
func portOf(t *testing.T, c corev1.Container, port intstr.IntOrString) int32 {
	t.Helper()
	if port.Type == intstr.Int {
		return port.IntVal
	}
	for _, p := range c.Ports {
		if p.Name == port.StrVal {
			return p.ContainerPort
		}
	}
	t.Fatalf("container %s has no port named %s", c.Name, port.StrVal)
	return 0
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return "  (no output)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func podmanCmd(args ...string) (string, error) {
	out, err := exec.Command(podman, args...).CombinedOutput()
	return string(out), err
}

func mustPodman(t *testing.T, args ...string) string {
	t.Helper()
	out, err := podmanCmd(args...)
	if err != nil {
		t.Fatalf("podman %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func removeContainer(name string) {
	_, _ = podmanCmd("rm", "--force", "--time", "0", "--ignore", name)
}

func ctx() context.Context { return context.Background() }
