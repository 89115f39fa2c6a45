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

// Command kubectl-sunstrider is the operator's kubectl plugin (put it on
// PATH, then `kubectl sunstrider ...`):
//
//	kubectl sunstrider history NAME [-n NAMESPACE]
//	kubectl sunstrider rollback NAME --to-revision N [-n NAMESPACE]
//
// history lists an Application's revisions (status.revisions). rollback
// writes revision N's Pod template back into the Application's
// spec.deployment.template, as the user running it (their RBAC decides, as
// for a kubectl edit), so a GitOps tool sees the same change in its diff;
// the operator then rolls it out as any spec change. It is a JSON patch
// that first tests the Application's resourceVersion: a change made
// meanwhile is never overwritten.
//
// Hand-written: kubectl's rollout commands act on the Deployment, whose
// template the operator owns and puts back.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
	"sunstrider.cn/operator/internal/controller/apps"
)

// fieldManager names the plugin's writes in the Application's managedFields.
const fieldManager = "kubectl-sunstrider"

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		os.Exit(1)
	}
}

const usage = `usage:
  kubectl sunstrider history NAME [-n NAMESPACE]
  kubectl sunstrider rollback NAME --to-revision N [-n NAMESPACE]`

func run(ctx context.Context, args []string, out io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	cmd := args[0]
	fs := flag.NewFlagSet("kubectl sunstrider "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	namespace := fs.String("namespace", "", "the Application's namespace (default: the kubeconfig context's)")
	fs.StringVar(namespace, "n", "", "short for --namespace")
	kubeconfig := fs.String("kubeconfig", "", "the kubeconfig file (default: KUBECONFIG, then ~/.kube/config)")
	toRevision := fs.Int64("to-revision", 0, "the revision to roll back to (kubectl sunstrider history lists them)")
	// The name may come before the flags, as kubectl's commands take it.
	var name string
	rest := args[1:]
	if len(rest) > 0 && !strings.HasPrefix(rest[0], "-") {
		name, rest = rest[0], rest[1:]
	}
	if err := fs.Parse(rest); err != nil {
		return fmt.Errorf("%w\n%s", err, usage)
	}
	if name == "" && fs.NArg() == 1 {
		name = fs.Arg(0)
	} else if name == "" || fs.NArg() > 0 {
		return errors.New(usage)
	}
	c, ns, err := clientFor(*kubeconfig, *namespace)
	if err != nil {
		return err
	}
	key := types.NamespacedName{Namespace: ns, Name: name}
	switch cmd {
	case "history":
		return history(ctx, c, key, out)
	case "rollback":
		if *toRevision <= 0 {
			return fmt.Errorf("--to-revision is required: a revision number (kubectl sunstrider history %s)", name)
		}
		return rollback(ctx, c, key, *toRevision, out)
	}
	return fmt.Errorf("unknown command %q\n%s", cmd, usage)
}

// clientFor is a client of the kubeconfig's cluster, as its context's user,
// and the namespace to act in.
func clientFor(kubeconfig, namespace string) (client.Client, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = kubeconfig
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules,
		&clientcmd.ConfigOverrides{Context: clientcmdapi.Context{Namespace: namespace}})
	cfg, err := cc.ClientConfig()
	if err != nil {
		return nil, "", fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns := namespace
	if ns == "" {
		if ns, _, err = cc.Namespace(); err != nil {
			return nil, "", fmt.Errorf("reading the kubeconfig's namespace: %w", err)
		}
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	if err := sunappsv1.AddToScheme(scheme); err != nil {
		return nil, "", err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		return nil, "", fmt.Errorf("connecting to the cluster: %w", err)
	}
	return c, ns, nil
}

// revisions are the Application's ControllerRevisions, newest first.
func revisions(ctx context.Context, c client.Client, app *sunappsv1.Application) ([]appsv1.ControllerRevision, error) {
	list := &appsv1.ControllerRevisionList{}
	if err := c.List(ctx, list, client.InNamespace(app.Namespace),
		client.MatchingLabels{apps.ApplicationLabel: app.Name}); err != nil {
		return nil, fmt.Errorf("listing the revisions of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	revs := slices.DeleteFunc(list.Items, func(cr appsv1.ControllerRevision) bool {
		return !apply.IsControlledBy(&cr, app.UID)
	})
	slices.SortFunc(revs, func(a, b appsv1.ControllerRevision) int { return int(b.Revision - a.Revision) })
	return revs, nil
}

func getApplication(ctx context.Context, c client.Client, key types.NamespacedName) (*sunappsv1.Application, error) {
	app := &sunappsv1.Application{}
	if err := c.Get(ctx, key, app); err != nil {
		if apierrors.IsNotFound(err) {
			return nil, fmt.Errorf("application %s not found", key)
		}
		return nil, fmt.Errorf("reading Application %s: %w", key, err)
	}
	return app, nil
}

func history(ctx context.Context, c client.Client, key types.NamespacedName, out io.Writer) error {
	app, err := getApplication(ctx, c, key)
	if err != nil {
		return err
	}
	revs, err := revisions(ctx, c, app)
	if err != nil {
		return err
	}
	if len(revs) == 0 {
		_, err := fmt.Fprintf(out, "Application %s has no revisions yet: they start at the first change of its "+
			"template\n", key)
		return err
	}
	w := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(w, "REVISION\tIMAGES\tSINCE\tOUTCOME")
	outcomes := map[int64]sunappsv1.RevisionStatus{}
	for _, rs := range app.Status.Revisions {
		outcomes[rs.Revision] = rs
	}
	for _, cr := range revs {
		outcome := string(outcomes[cr.Revision].Outcome)
		if outcome == "" {
			outcome = "-"
		}
		_, _ = fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", cr.Revision, cr.Annotations[apps.RevisionImagesAnnotation],
			cr.Annotations[apps.RevisionSinceAnnotation], outcome)
	}
	return w.Flush()
}

func rollback(ctx context.Context, c client.Client, key types.NamespacedName, to int64, out io.Writer) error {
	app, err := getApplication(ctx, c, key)
	if err != nil {
		return err
	}
	revs, err := revisions(ctx, c, app)
	if err != nil {
		return err
	}
	i := slices.IndexFunc(revs, func(cr appsv1.ControllerRevision) bool { return cr.Revision == to })
	if i < 0 {
		have := make([]string, 0, len(revs))
		for _, cr := range revs {
			have = append(have, strconv.FormatInt(cr.Revision, 10))
		}
		if len(have) == 0 {
			return fmt.Errorf("application %s has no revision %d: it has none yet "+
				"(they start at the first change of its template)", key, to)
		}
		return fmt.Errorf("application %s has no revision %d: its revisions are %s", key, to,
			strings.Join(have, ", "))
	}
	var data apps.RevisionData
	if err := json.Unmarshal(revs[i].Data.Raw, &data); err != nil {
		return fmt.Errorf("decoding revision %d of Application %s: %w", to, key, err)
	}
	template := data.Spec.Deployment.Template
	if equality.Semantic.DeepEqual(template, app.Spec.Deployment.Template) {
		_, err := fmt.Fprintf(out, "application.apps.sunstrider.cn/%s already runs the template of revision %d\n",
			key.Name, to)
		return err
	}
	patch, err := json.Marshal([]map[string]any{
		{"op": "test", "path": "/metadata/resourceVersion", "value": app.ResourceVersion},
		{"op": "replace", "path": "/spec/deployment/template", "value": template},
	})
	if err != nil {
		return err
	}
	err = c.Patch(ctx, app, client.RawPatch(types.JSONPatchType, patch), client.FieldOwner(fieldManager))
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("refused: you may not update Application %s (kubectl auth can-i update "+
			"applications.apps.sunstrider.cn -n %s): %w", key, key.Namespace, err)
	case apierrors.IsInvalid(err) && strings.Contains(err.Error(), "test operation"):
		return fmt.Errorf("application %s changed meanwhile; nothing was written: run the rollback again", key)
	case err != nil:
		return fmt.Errorf("rolling Application %s back to revision %d: %w", key, to, err)
	}
	_, err = fmt.Fprintf(out, "application.apps.sunstrider.cn/%s rolled back to revision %d (%s); generation %d\n",
		key.Name, to, revs[i].Annotations[apps.RevisionImagesAnnotation], app.Generation)
	return err
}
