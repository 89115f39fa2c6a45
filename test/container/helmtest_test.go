//go:build container

/*
Copyright 2026 The sunstrider operator authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package container

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"
)

const (
	hookAnnotation       = "helm.sh/hook"
	hookWeightAnnotation = "helm.sh/hook-weight"
)

// chartTestHook is the chart's `helm test` hook as `helm template` renders
// it: the Job whose Pod runs the check, and what Helm creates before it
// (a lower hook weight): its ServiceAccount, Role and RoleBinding.
type chartTestHook struct {
	job    *batchv1.Job
	before []*unstructured.Unstructured
}

// add takes one rendered hook object. The chart's only hooks are its
// test's.
func (h *chartTestHook) add(t *testing.T, obj *unstructured.Unstructured, doc []byte) {
	t.Helper()
	if hook := obj.GetAnnotations()[hookAnnotation]; hook != "test" {
		t.Fatalf("%s %s: hook %q, the suite models the test hook only", obj.GetKind(), obj.GetName(), hook)
	}
	if obj.GetKind() != "Job" {
		h.before = append(h.before, obj)
		return
	}
	if h.job != nil {
		t.Fatal("the chart renders more than one test Job")
	}
	h.job = &batchv1.Job{}
	if err := yaml.UnmarshalStrict(doc, h.job); err != nil {
		t.Fatalf("the rendered test Job: %v", err)
	}
}

// check fails unless there is a Job whose Pod the suite can run (one
// container, no init container) and Helm creates every other object of
// the hook before it: a lower hook weight (Helm orders hooks by weight,
// then by name).
func (h *chartTestHook) check(t *testing.T) {
	t.Helper()
	if h.job == nil {
		t.Fatal("the chart renders no test Job")
	}
	spec := h.job.Spec.Template.Spec
	if len(spec.Containers) != 1 || len(spec.InitContainers) > 0 {
		t.Fatalf("test Job %s: %d containers and %d init containers, the suite runs one container",
			h.job.Name, len(spec.Containers), len(spec.InitContainers))
	}
	weight := func(annotations map[string]string) int {
		w, ok := annotations[hookWeightAnnotation]
		if !ok {
			return 0
		}
		n, err := strconv.Atoi(w)
		if err != nil {
			t.Fatalf("hook weight %q: %v", w, err)
		}
		return n
	}
	jobWeight := weight(h.job.Annotations)
	for _, obj := range h.before {
		if weight(obj.GetAnnotations()) >= jobWeight {
			t.Errorf("test hook %s %s is not weighted below the Job: Helm may create it after the Job's Pod",
				obj.GetKind(), obj.GetName())
		}
	}
}

// install applies what Helm creates before the Job.
func (h *chartTestHook) install(t *testing.T) {
	t.Helper()
	var docs bytes.Buffer
	for _, obj := range h.before {
		data, err := yaml.Marshal(obj.Object)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&docs, "---\n%s", data)
	}
	mustRunIn(t, docs.Bytes(), kubectl, "apply", "--server-side", "-f", "-")
}

// run runs the Job's Pod, named pod, as a kubelet would, in the podman
// network named network, with args added to its container's (the last of
// a repeated flag wins), and returns its output and exit code.
//
// The network: the Pod has no port and only talks to the API server, at
// the suite's network gateway, an address of the host while that network
// has a container: "host" while the replicas run, the suite's network
// (clusterName) once they have stopped. A check container that joined and
// left the replicas' network just before the leader's SIGTERM was followed,
// in both runs tried on a loaded machine, by the standby's Lease requests
// timing out (no takeover within 10 s); from the host's network it was not,
// in four runs. The cause, found later: a container leaving the network
// could change the bridge's MAC address, the replicas' gateway
// (pinBridgeAddress, which now prevents it). Running the check outside the
// replicas' network still keeps it from touching that network while they
// run.
func (h *chartTestHook) run(t *testing.T, pod, network, image string, args ...string) (string, int) {
	t.Helper()
	spec := *h.job.Spec.Template.Spec.DeepCopy()
	c := &spec.Containers[0]
	c.Args = append(c.Args, args...)
	p := &podRun{
		name:      pod,
		namespace: h.job.Namespace,
		spec:      spec,
		image:     image,
		network:   network,
		apiHost:   apiHost,
		apiPort:   apiServerPort(t),
		dir:       filepath.Join(workDir, "pods", pod),
	}
	out, err := p.runToEnd(t, *c)
	var exit *exec.ExitError
	switch {
	case err == nil:
		return out, 0
	case errors.As(err, &exit):
		return out, exit.ExitCode()
	}
	t.Fatalf("running the test Pod %s: %v\n%s", pod, err, out)
	return "", 0
}
