package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// The -service-account modes: the manager runs impersonating its
// ServiceAccount, with config/default's RBAC, and with none, one or both
// of its ValidatingAdmissionPolicies, so that a pair of runs weighs what a
// policy costs the API server (docs/performance.md).
const (
	serviceAccountRBAC      = "rbac"
	serviceAccountPodPolicy = "pod-policy"
	serviceAccountPolicies  = "policies"
)

// The shipped ValidatingAdmissionPolicies (and bindings) of the manager's
// ServiceAccount.
const (
	podPolicy   = "sunstrider-operator-manager-pod-writes"
	writePolicy = "sunstrider-operator-manager-writes"
)

// policiesOf returns the policies mode installs.
func policiesOf(mode string) map[string]bool {
	return map[string]bool{
		podPolicy:   mode == serviceAccountPodPolicy || mode == serviceAccountPolicies,
		writePolicy: mode == serviceAccountPolicies,
	}
}

// asServiceAccount applies config/default's ServiceAccount and RBAC, adds
// or removes its admission policies (mode), and returns a kubeconfig of
// the cluster impersonating the ServiceAccount, once the policies are in
// force (or gone).
func (b *bench) asServiceAccount(ctx context.Context, mode string) (string, error) {
	if mode != serviceAccountRBAC && mode != serviceAccountPodPolicy && mode != serviceAccountPolicies {
		return "", fmt.Errorf("-service-account must be %q, %q or %q, not %q", serviceAccountRBAC,
			serviceAccountPodPolicy, serviceAccountPolicies, mode)
	}
	policies := policiesOf(mode)
	build := exec.CommandContext(ctx, b.cfg.kustomize, "build", "config/default")
	build.Stderr = os.Stderr
	rendered, err := build.Output()
	if err != nil {
		return "", fmt.Errorf("rendering config/default: %w", err)
	}
	var keep []string
	username := ""
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(rendered), 4096)
	for {
		obj := &unstructured.Unstructured{}
		if err := dec.Decode(&obj.Object); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return "", fmt.Errorf("reading config/default: %w", err)
		}
		switch obj.GetKind() {
		case "ServiceAccount":
			username = "system:serviceaccount:" + obj.GetNamespace() + ":" + obj.GetName()
		case "Namespace", "Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding":
		case "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding":
			if !policies[obj.GetName()] {
				continue
			}
		default:
			continue
		}
		data, err := obj.MarshalJSON()
		if err != nil {
			return "", err
		}
		keep = append(keep, string(data))
	}
	if username == "" {
		return "", errors.New("config/default has no ServiceAccount")
	}
	apply := exec.CommandContext(ctx, b.cfg.kubectl, "--kubeconfig", b.cfg.kubeconfig,
		"apply", "--server-side", "--force-conflicts", "-f", "-")
	apply.Stdin = strings.NewReader(strings.Join(keep, "\n"))
	if out, err := apply.CombinedOutput(); err != nil {
		return "", fmt.Errorf("applying config/default's RBAC: %w\n%s", err, out)
	}
	for name, installed := range policies {
		if installed {
			continue
		}
		for _, kind := range []string{"ValidatingAdmissionPolicyBinding", "ValidatingAdmissionPolicy"} {
			obj := &unstructured.Unstructured{}
			obj.SetAPIVersion("admissionregistration.k8s.io/v1")
			obj.SetKind(kind)
			obj.SetName(name)
			if err := b.c.Delete(ctx, obj); err != nil && !apierrors.IsNotFound(err) {
				return "", err
			}
		}
	}

	raw, err := clientcmd.LoadFromFile(b.cfg.kubeconfig)
	if err != nil {
		return "", err
	}
	for _, user := range raw.AuthInfos {
		user.Impersonate = username
	}
	path := filepath.Join(b.cfg.workDir, "kubeconfig-service-account")
	if err := clientcmd.WriteToFile(*raw, path); err != nil {
		return "", err
	}

	// RBAC and policies load asynchronously: wait until a ConfigMap the
	// write policy refuses is refused (when installed) or let through, as a
	// dry run of the ServiceAccount.
	restCfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		return "", err
	}
	sa, err := client.New(restCfg, client.Options{Scheme: scheme})
	if err != nil {
		return "", err
	}
	probe := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: operatorNamespace, Name: "bench-policy-probe"}}
	err = wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, time.Minute, true, func(ctx context.Context) (
		bool, error) {
		err := sa.Create(ctx, probe.DeepCopy(), client.DryRunAll)
		refused := err != nil && strings.Contains(err.Error(), "the operator may create an object only with the label")
		if policies[writePolicy] {
			return refused, nil
		}
		return err == nil, nil
	})
	if err != nil {
		return "", fmt.Errorf("waiting for the ServiceAccount's rights and policies (%s): %w", mode, err)
	}
	return path, nil
}
