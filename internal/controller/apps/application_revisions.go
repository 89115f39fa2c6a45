package apps

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
	"sigs.k8s.io/controller-runtime/pkg/client"

	sunappsv1 "sunstrider.cn/operator/api/apps/v1"
	"sunstrider.cn/operator/internal/apply"
)

// The labels and annotations of an Application's ControllerRevisions.
const (
	// RevisionHashLabel holds the hash of the revision's Pod template: the
	// revision of a template rolled out again is found by it.
	RevisionHashLabel = "apps.sunstrider.cn/template-hash"
	// RevisionImagesAnnotation holds the template's images, comma-joined,
	// for the status (so that no reconcile decodes a template to list them).
	RevisionImagesAnnotation = "apps.sunstrider.cn/images"
	// RevisionSinceAnnotation holds when the revision became the current
	// one (RFC 3339).
	RevisionSinceAnnotation = "apps.sunstrider.cn/since"
	// RevisionOutcomeAnnotation holds how its rollout ended, once it did
	// (RolledOut, Failed).
	RevisionOutcomeAnnotation = "apps.sunstrider.cn/outcome"
)

// RevisionData is what a ControllerRevision of an Application holds: the
// part of the Application a rollback writes back, its Pod template.
type RevisionData struct {
	Spec struct {
		Deployment struct {
			Template corev1.PodTemplateSpec `json:"template"`
		} `json:"deployment"`
	} `json:"spec"`
}

// defaultRevisionHistoryLimit is the old revisions kept when
// spec.deployment.revisionHistoryLimit is unset (the Deployment's default).
const defaultRevisionHistoryLimit = 10

// reconcileRevisions keeps the Pod templates the Application rolled out as
// ControllerRevisions it owns, like a StatefulSet's, and notes them in s.
//
// Revisions start at the first change of the template: an Application
// never changed costs no object. The first revision is then the template
// the Deployment ran until that change, as the API server stored it (with
// its defaults); the others are the Application's templates. A template
// rolled out again (a rollback) has its revision renumbered as the
// newest, as a StatefulSet's does. Old revisions beyond
// revisionHistoryLimit are deleted.
func (r *ApplicationReconciler) reconcileRevisions(ctx context.Context, s *applicationScope) error {
	app := s.app
	if s.deployment == nil || s.selectorImmutable != "" {
		return nil
	}
	list := &appsv1.ControllerRevisionList{}
	if err := r.List(ctx, list, client.InNamespace(app.Namespace),
		client.MatchingLabels{ApplicationLabel: app.Name}); err != nil {
		return fmt.Errorf("listing the revisions of Application %s/%s: %w", app.Namespace, app.Name, err)
	}
	var revs []*appsv1.ControllerRevision
	for i := range list.Items {
		if apply.IsControlledBy(&list.Items[i], app.UID) {
			revs = append(revs, &list.Items[i])
		}
	}
	if len(revs) == 0 && s.previousTemplate == nil {
		return nil
	}
	now := time.Now()
	if len(revs) == 0 {
		first, err := newRevision(app, *s.previousTemplate, 1, s.previousSince, s.previousOutcome)
		if err != nil {
			return err
		}
		obj, err := s.children.Write(ctx, first, nil)
		if err != nil || obj == nil {
			return err
		}
		revs = append(revs, obj.(*appsv1.ControllerRevision))
	}
	sortRevisions(revs)

	hash, err := apply.Hash(app.Spec.Deployment.Template)
	if err != nil {
		return err
	}
	newest := revs[0].Revision
	i := slices.IndexFunc(revs, func(cr *appsv1.ControllerRevision) bool { return cr.Labels[RevisionHashLabel] == hash })
	var desired *appsv1.ControllerRevision
	switch {
	case i < 0:
		desired, err = newRevision(app, app.Spec.Deployment.Template, newest+1, now, "")
	case revs[i].Revision != newest:
		// Rolled out again: renumbered as the newest, its data (immutable)
		// as stored.
		desired, err = newRevision(app, app.Spec.Deployment.Template, newest+1, now, "")
		if err == nil {
			desired.Name, desired.Data = revs[i].Name, revs[i].Data
		}
	default:
		desired = revisionAsIs(revs[i])
		if outcome := rolloutOutcome(&s.observation); outcome != sunappsv1.RevisionRollingOut &&
			desired.Annotations[RevisionOutcomeAnnotation] != string(outcome) {
			desired.Annotations[RevisionOutcomeAnnotation] = string(outcome)
		} else {
			desired = nil
		}
	}
	if err != nil {
		return err
	}
	if desired != nil {
		var live client.Object
		if i >= 0 {
			live = revs[i]
		}
		obj, err := s.children.Write(ctx, desired, live)
		if err != nil {
			return err
		}
		if cr, ok := obj.(*appsv1.ControllerRevision); ok {
			if i >= 0 {
				revs[i] = cr
			} else {
				revs = append(revs, cr)
			}
		}
		sortRevisions(revs)
	}

	keep := int(ptr.Deref(app.Spec.Deployment.RevisionHistoryLimit, defaultRevisionHistoryLimit)) + 1
	for _, old := range revs[min(keep, len(revs)):] {
		if err := s.children.Delete(ctx, old, "beyond spec.deployment.revisionHistoryLimit"); err != nil {
			return err
		}
	}
	s.revisions = revs[:min(keep, len(revs))]
	return nil
}

// newRevision is the ControllerRevision of template, numbered revision,
// current since since, with outcome when known.
func newRevision(app *sunappsv1.Application, template corev1.PodTemplateSpec, revision int64, since time.Time,
	outcome sunappsv1.RevisionOutcome) (*appsv1.ControllerRevision, error) {
	var data RevisionData
	data.Spec.Deployment.Template = template
	raw, err := json.Marshal(data)
	if err != nil {
		return nil, fmt.Errorf("encoding a revision of Application %s: %w", app.Name, err)
	}
	hash, err := apply.Hash(template)
	if err != nil {
		return nil, err
	}
	meta := childMeta(app)
	meta.Name = app.Name + "-" + hash
	meta.Labels[RevisionHashLabel] = hash
	images := make([]string, 0, len(template.Spec.Containers))
	for _, c := range template.Spec.Containers {
		images = append(images, c.Image)
	}
	meta.Annotations = map[string]string{
		RevisionImagesAnnotation: strings.Join(images, ","),
		RevisionSinceAnnotation:  since.UTC().Format(time.RFC3339),
	}
	if outcome != "" {
		meta.Annotations[RevisionOutcomeAnnotation] = string(outcome)
	}
	return &appsv1.ControllerRevision{
		TypeMeta:   metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "ControllerRevision"},
		ObjectMeta: meta,
		Data:       runtime.RawExtension{Raw: raw},
		Revision:   revision,
	}, nil
}

// revisionAsIs is the desired form of live, a revision that stays as it
// is: what the operator set on it, to change one annotation.
func revisionAsIs(live *appsv1.ControllerRevision) *appsv1.ControllerRevision {
	cr := &appsv1.ControllerRevision{
		TypeMeta: metav1.TypeMeta{APIVersion: appsv1.SchemeGroupVersion.String(), Kind: "ControllerRevision"},
		ObjectMeta: metav1.ObjectMeta{Name: live.Name, Namespace: live.Namespace,
			Labels: live.Labels, OwnerReferences: live.OwnerReferences, Annotations: map[string]string{}},
		Data:     live.Data,
		Revision: live.Revision,
	}
	for _, k := range []string{RevisionImagesAnnotation, RevisionSinceAnnotation, RevisionOutcomeAnnotation} {
		if v, ok := live.Annotations[k]; ok {
			cr.Annotations[k] = v
		}
	}
	return cr
}

// sortRevisions puts the newest first.
func sortRevisions(revs []*appsv1.ControllerRevision) {
	slices.SortFunc(revs, func(a, b *appsv1.ControllerRevision) int { return int(b.Revision - a.Revision) })
}

// rolloutOutcome is how the rollout of the current template stands.
func rolloutOutcome(obs *observation) sunappsv1.RevisionOutcome {
	if obs.deployment == nil {
		return sunappsv1.RevisionRollingOut
	}
	if _, degraded := deploymentDegraded(obs.deployment); degraded {
		return sunappsv1.RevisionFailed
	}
	if deploymentRollout(obs.deployment).Status == kstatus.CurrentStatus {
		return sunappsv1.RevisionRolledOut
	}
	return sunappsv1.RevisionRollingOut
}

// revisionStatus reports revs (newest first, the first the current one)
// for the status.
func revisionStatus(revs []*appsv1.ControllerRevision, obs *observation) (int64, []sunappsv1.RevisionStatus) {
	if len(revs) == 0 {
		return 0, nil
	}
	out := make([]sunappsv1.RevisionStatus, 0, len(revs))
	for i, cr := range revs {
		rs := sunappsv1.RevisionStatus{Revision: cr.Revision,
			Outcome: sunappsv1.RevisionOutcome(cr.Annotations[RevisionOutcomeAnnotation])}
		if images := cr.Annotations[RevisionImagesAnnotation]; images != "" {
			rs.Images = strings.Split(images, ",")
		}
		if since, err := time.Parse(time.RFC3339, cr.Annotations[RevisionSinceAnnotation]); err == nil {
			rs.Since = metav1.NewTime(since)
		}
		if i == 0 {
			rs.Outcome = rolloutOutcome(obs)
		}
		out = append(out, rs)
	}
	return revs[0].Revision, out
}
