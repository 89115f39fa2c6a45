package certs

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"sunstrider.cn/operator/internal/apply"
)

// rotator keeps, on the leader: a CA valid beyond the renewal window in
// the CA Secret; a serving certificate it signs, valid beyond that window
// for every DNS name, in the serving Secret (with ca.crt, and never the
// CA key); the CA in the caBundle of every target; and ca.crt in the
// ConfigMap. It checks every CheckInterval and at each change of the
// serving Secret or of a target, and retries a failed check with a
// growing delay.
type rotator struct {
	reader   client.Reader // GETs by name, never a cache of more
	client   client.Client
	watches  watches
	o        Options
	dnsNames []string
	targets  []*unstructured.Unstructured
	ca       publisher
	injected chan struct{}
	once     sync.Once
}

// NeedLeaderElection is true: one replica issues certificates.
func (r *rotator) NeedLeaderElection() bool { return true }

// Start keeps the certificates until ctx ends.
func (r *rotator) Start(ctx context.Context) error {
	log := ctrl.LoggerFrom(ctx).WithName("cert-rotator")
	ctx = ctrl.LoggerInto(ctx, log)
	changed := make(chan struct{}, 1)
	notify := func(any) {
		select {
		case changed <- struct{}{}:
		default:
		}
	}
	serving := &corev1.Secret{}
	serving.Namespace, serving.Name = r.o.Namespace, r.o.SecretName
	for _, obj := range append([]client.Object{serving}, objects(r.targets)...) {
		if err := r.watches.watch(ctx, obj, notify); err != nil {
			return err
		}
	}
	ticker := time.NewTicker(r.o.CheckInterval)
	defer ticker.Stop()
	const firstRetry, lastRetry = time.Second, time.Minute
	delay := firstRetry
	for {
		var retry <-chan time.Time
		err := r.check(ctx)
		switch {
		case ctx.Err() != nil:
			return nil
		case err != nil:
			log.Error(err, "Keeping the webhook certificate failed, retrying", "after", delay.String())
			retry = time.After(delay)
			delay = min(2*delay, lastRetry)
		default:
			delay = firstRetry
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		case <-changed:
		case <-retry:
		}
	}
}

func objects(targets []*unstructured.Unstructured) []client.Object {
	out := make([]client.Object, 0, len(targets))
	for _, t := range targets {
		out = append(out, t.DeepCopy())
	}
	return out
}

// check brings the Secrets, the targets and the ConfigMap up to date.
func (r *rotator) check(ctx context.Context) error {
	now := time.Now()
	caSecret, serving := &corev1.Secret{}, &corev1.Secret{}
	for _, s := range []struct {
		name   string
		secret *corev1.Secret
	}{{r.o.CASecretName, caSecret}, {r.o.SecretName, serving}} {
		key := types.NamespacedName{Namespace: r.o.Namespace, Name: s.name}
		if err := r.reader.Get(ctx, key, s.secret); err != nil {
			return fmt.Errorf("reading Secret %s (the manifests of this release create it empty): %w", key, err)
		}
	}
	ca, err := r.authority(ctx, caSecret, serving, now)
	if err != nil {
		return err
	}
	if err := r.serve(ctx, ca, serving, now); err != nil {
		return err
	}
	for _, t := range r.targets {
		if err := injectCA(ctx, r.reader, r.client, t, ca.certPEM); apierrors.IsNotFound(err) {
			ctrl.LoggerFrom(ctx).Info("Not injecting the CA: no such object", "kind", t.GetKind(), "name", t.GetName())
		} else if err != nil {
			return fmt.Errorf("injecting the CA into %s %s: %w", t.GetKind(), t.GetName(), err)
		}
	}
	r.once.Do(func() {
		ctrl.LoggerFrom(ctx).Info("CA injected", "objects", len(r.targets))
		close(r.injected)
	})
	return r.ca.publish(ctx, ca.certPEM)
}

// authority returns the CA of the CA Secret while it is valid beyond the
// renewal window; else the one an earlier version kept in the serving
// Secret, when it is (adopted: the webhook configurations trust it
// already, so an upgrade changes no caBundle); else a new one. A CA taken
// from elsewhere is stored in the CA Secret before anything uses it.
func (r *rotator) authority(ctx context.Context, caSecret, serving *corev1.Secret, now time.Time) (*authority, error) {
	log := ctrl.LoggerFrom(ctx)
	renewAt := now.Add(r.o.RenewBefore)
	if ca, err := parseAuthority(caSecret.Data[caName], caSecret.Data[caKeyName]); err == nil && ca.validUntil(now, renewAt) {
		return ca, nil
	}
	ca, err := parseAuthority(serving.Data[caName], serving.Data[caKeyName])
	if err == nil && ca.validUntil(now, renewAt) {
		log.Info("Moving the CA out of the serving Secret", "from", serving.Name, "to", caSecret.Name)
	} else {
		log.Info("Issuing a new CA", "secret", caSecret.Name, "validity", r.o.CAValidity.String())
		if ca, err = newAuthority(now, r.o.CAValidity); err != nil {
			return nil, err
		}
	}
	caSecret.Data = map[string][]byte{caName: ca.certPEM, caKeyName: ca.keyPEM}
	if err := r.client.Update(ctx, caSecret, client.FieldOwner(apply.FieldOwner)); err != nil {
		return nil, fmt.Errorf("writing the CA into Secret %s: %w", caSecret.Name, err)
	}
	return ca, nil
}

// serve keeps in the serving Secret a certificate ca signs for every DNS
// name, valid beyond the renewal window, its key and ca.crt, and nothing
// else: no CA key, which an earlier version kept there.
func (r *rotator) serve(ctx context.Context, ca *authority, serving *corev1.Secret, now time.Time) error {
	cert, key := serving.Data[certName], serving.Data[keyName]
	if !ca.validServing(cert, key, r.dnsNames, now, now.Add(r.o.RenewBefore)) {
		ctrl.LoggerFrom(ctx).Info("Issuing a serving certificate", "secret", serving.Name, "dnsNames", r.dnsNames,
			"validity", r.o.CertValidity.String())
		var err error
		if cert, key, err = ca.issue(r.dnsNames, now, r.o.CertValidity); err != nil {
			return err
		}
	}
	want := map[string][]byte{caName: ca.certPEM, certName: cert, keyName: key}
	if maps.EqualFunc(serving.Data, want, bytes.Equal) {
		return nil
	}
	serving.Data = want
	if err := r.client.Update(ctx, serving, client.FieldOwner(apply.FieldOwner)); err != nil {
		return fmt.Errorf("writing the serving certificate into Secret %s: %w", serving.Name, err)
	}
	return nil
}
