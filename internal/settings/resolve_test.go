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

package settings

import (
	"errors"
	"slices"
	"testing"
	"time"

	. "github.com/onsi/gomega"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	configv1alpha1 "sunstrider.cn/operator/api/config/v1alpha1"
)

var flags = Settings{
	GuestbookImage:          "example.com/flag",
	GuestbookResources:      DefaultGuestbookResources(),
	ConflictRecheckInterval: DefaultConflictRecheckInterval,
	LogLevel:                "info",
	ChildAccess:             DefaultChildAccess,
	Controllers:             AllControllers,
}

func existing(names ...string) func(string) (bool, error) {
	return func(name string) (bool, error) { return slices.Contains(names, name), nil }
}

func TestResolve(t *testing.T) {
	lastGood := flags
	lastGood.GuestbookImage = "example.com/last-good"
	lastGood.WatchNamespaces = []string{"old"}
	for _, tc := range []struct {
		name    string
		spec    configv1alpha1.OperatorConfigurationSpec
		want    func(*Settings)
		refused []string
	}{
		{name: "empty: the flags", want: func(*Settings) {}},
		{name: "every field", spec: configv1alpha1.OperatorConfigurationSpec{
			GuestbookImage: "example.com/cr", ConflictRecheckInterval: "5m", LogLevel: "2",
			ChildAccess:               configv1alpha1.ChildAccessDelegated,
			Controllers:               &configv1alpha1.ControllersSpec{Drink: new(false)},
			WatchNamespaces:           []string{"b", "a"},
			GuestbookSystemNamespaces: []string{"kube-system", "kube-public"},
		}, want: func(s *Settings) {
			s.GuestbookImage, s.ConflictRecheckInterval, s.LogLevel = "example.com/cr", 5*time.Minute, "2"
			s.Controllers.Drink = false
			s.ChildAccess = configv1alpha1.ChildAccessDelegated
			s.WatchNamespaces = []string{"a", "b"}
			s.GuestbookSystemNamespaces = []string{"kube-public", "kube-system"}
		}},
		{name: "missing namespace keeps the last good list",
			spec: configv1alpha1.OperatorConfigurationSpec{WatchNamespaces: []string{"a", "gone"}},
			want: func(s *Settings) { s.WatchNamespaces = []string{"old"} }, refused: []string{"spec.watchNamespaces"}},
		{name: "limit below request keeps the last good resources",
			spec: configv1alpha1.OperatorConfigurationSpec{GuestbookResources: &configv1alpha1.GuestbookResources{
				Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")},
				Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m")},
			}},
			want: func(*Settings) {}, refused: []string{"spec.guestbookResources"}},
		{name: "interval out of bounds (not stored: CEL refuses it)",
			spec:    configv1alpha1.OperatorConfigurationSpec{ConflictRecheckInterval: "2h"},
			want:    func(*Settings) {},
			refused: []string{"spec.conflictRecheckInterval"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := NewWithT(t)
			want := flags
			tc.want(&want)
			got, refused, err := Resolve(&tc.spec, &flags, &lastGood, existing("a", "b"))
			g.Expect(err).NotTo(HaveOccurred())
			g.Expect(got).To(Equal(want))
			var fields []string
			for _, r := range refused {
				fields = append(fields, r.Field)
			}
			g.Expect(fields).To(Equal(tc.refused))
		})
	}
	_, _, err := Resolve(&configv1alpha1.OperatorConfigurationSpec{WatchNamespaces: []string{"a"}}, &flags, &flags,
		func(string) (bool, error) { return false, errors.New("down") })
	NewWithT(t).Expect(err).To(MatchError(ContainSubstring("down")))
}

// The decision to restart: only the fields that apply at start count, and
// the order of the namespaces does not.
func TestRestartNeeded(t *testing.T) {
	started := flags
	started.WatchNamespaces = []string{"a", "b"}
	for _, tc := range []struct {
		name   string
		change func(*Settings)
		want   []string
	}{
		{"nothing", func(*Settings) {}, nil},
		{"live fields only", func(s *Settings) {
			s.GuestbookImage, s.LogLevel, s.ConflictRecheckInterval = "x", "debug", time.Second
		}, nil},
		{"namespaces reordered", func(s *Settings) { s.WatchNamespaces = []string{"b", "a"} }, nil},
		{"a namespace more", func(s *Settings) { s.WatchNamespaces = []string{"a", "b", "c"} },
			[]string{"spec.watchNamespaces"}},
		{"every namespace", func(s *Settings) { s.WatchNamespaces = nil }, []string{"spec.watchNamespaces"}},
		{"a controller off", func(s *Settings) { s.Controllers.Guestbook = false }, []string{"spec.controllers"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := started
			want.WatchNamespaces = append([]string(nil), started.WatchNamespaces...)
			tc.change(&want)
			NewWithT(t).Expect(RestartNeeded(&started, &want)).To(Equal(tc.want))
		})
	}
}

func TestParseLevel(t *testing.T) {
	g := NewWithT(t)
	for in, want := range map[string]zapcore.Level{"error": zapcore.ErrorLevel, "info": zapcore.InfoLevel,
		"": zapcore.InfoLevel, "debug": zapcore.DebugLevel, "0": zapcore.InfoLevel, "1": zapcore.DebugLevel, "4": -4} {
		got, err := ParseLevel(in)
		g.Expect(err).NotTo(HaveOccurred())
		g.Expect(got).To(Equal(want), in)
		g.Expect(ParseLevel(LevelName(got))).To(Equal(want))
	}
	_, err := ParseLevel("verbose")
	g.Expect(err).To(HaveOccurred())
}

// Store sets the log level and wakes the subscribers whose settings changed,
// once however many changes they missed.
func TestHolderStoreNotifiesSubscribers(t *testing.T) {
	g := NewWithT(t)
	level := zap.NewAtomicLevel()
	h := NewHolder(flags, level)
	images := h.Subscribe(func(old, new *Settings) bool { return old.GuestbookImage != new.GuestbookImage })
	s := flags
	s.LogLevel = "debug"
	h.Store(s)
	g.Expect(level.Enabled(zapcore.DebugLevel)).To(BeTrue())
	g.Expect(images).To(BeEmpty())
	s.GuestbookImage = "a"
	h.Store(s)
	s.GuestbookImage = "b"
	h.Store(s)
	g.Expect(images).To(HaveLen(1))
	g.Expect(h.Load().GuestbookImage).To(Equal("b"))
}
