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
// newest, as a StatefulSet's does; not while the API server refuses the
// Deployment's write. What the operator sets on the current
// revision, changed by someone else, is put back (currentRevision); the
// current revision deleted is made again, numbered after the newest one
// left, when an older one is left (with none left, the Application is as
// one never changed). Old revisions beyond revisionHistoryLimit are
// deleted.
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
	keep := int(ptr.Deref(app.Spec.Deployment.RevisionHistoryLimit, defaultRevisionHistoryLimit)) + 1
	if refusal := s.children.Refusal; i != 0 && refusal != nil && refusal.Kind == "Deployment" {
		// The Deployment's write was refused: it still runs the newest
		// revision's template. The Application's becomes the current
		// revision once the Deployment takes it.
		s.revisions = revs[:min(keep, len(revs))]
		return nil
	}
	var desired *appsv1.ControllerRevision
	switch {
	case i < 0:
		desired, err = newRevision(app, app.Spec.Deployment.Template, newest+1, now, "")
	case revs[i].Revision != newest:
		// Rolled out again: renumbered as the newest. Its data (immutable)
		// is as when it was made: the encoding of the same template (the
		// same hash).
		desired, err = newRevision(app, app.Spec.Deployment.Template, newest+1, now, "")
	default:
		desired, err = currentRevision(app, revs[i], rolloutOutcome(&s.observation))
	}
	if err != nil {
		return err
	}
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

// currentRevision is the desired form of live, the revision of app's
// template and the newest: made as a new one is (app's labels, the
// controller reference, its hash label, its images, its data: the
// encoding of the same template, the same hash), so that what someone
// else changed there is put back (Write leaves it alone when nothing
// differs), with the outcome of its rollout once it ended (outcome;
// live's while RollingOut). What only live knows stays as stored: its
// number and since when it is current.
func currentRevision(app *sunappsv1.Application, live *appsv1.ControllerRevision,
	outcome sunappsv1.RevisionOutcome) (*appsv1.ControllerRevision, error) {
	if outcome == sunappsv1.RevisionRollingOut {
		outcome = sunappsv1.RevisionOutcome(live.Annotations[RevisionOutcomeAnnotation])
	}
	since, err := time.Parse(time.RFC3339, live.Annotations[RevisionSinceAnnotation])
	if err != nil {
		// Not a time the operator wrote: when it was made is the best guess.
		since = live.CreationTimestamp.Time
	}
	return newRevision(app, app.Spec.Deployment.Template, live.Revision, since, outcome)
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
