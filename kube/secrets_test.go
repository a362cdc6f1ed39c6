package kube

import (
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestSecretIn names what an argument carries, and leaves plain ones.
func TestSecretIn(t *testing.T) {
	for arg, want := range map[string]bool{
		"http://u:p@vllm:8000/v1":                    true,
		"http://vllm:8000/v1?key=abc":                true,
		"http://vllm:8000/metrics?token=abc":         true,
		`{"access_token":"sk-AT"}`:                   true,
		`{"nested":{"api_key":"x"}}`:                 true,
		"X-Api-Key: abc":                             true,
		"Authorization:Bearer abcdefghijkl":          true,
		"sk-abcdefghijklmnopqrstuvwx":                true,
		"hf_abcdefghijklmnopqrstuvwxyz":              true,
		"X-Api-Key:$(KNEE_HEADER_1)":                 false,
		"http://vllm:8000/v1":                        false,
		`{"ignore_eos":true,"max_tokens":5}`:         false,
		"--tokenizer":                                false,
		"/inputs/tokenizer.json":                     false,
		"ttft_p95:500":                               false,
		"2026-12-01T12:00:00Z":                       false,
		"meta-llama/Llama-3.1-8B-Instruct":           false,
		"--max-tokens":                               false,
		"ttft:300,tpot:50":                           false,
		"$(KNEE_TARGET)":                             false,
		"run":                                        false,
		"http://vllm.default.svc.cluster.local/v1?x": false,
	} {
		if got := SecretIn(arg) != ""; got != want {
			t.Errorf("SecretIn(%q) = %q, want a secret: %v", arg, SecretIn(arg), want)
		}
	}
}

// hostileJob is a shard job built from hostile inputs, or the error that
// refused it.
func hostileJob(target, header, runArg string) (*corev1.Container, error) {
	o := ShardJob{Name: "j", Image: "ghcr.io/kneebench/knee:latest", Shards: 2, Target: target, StartAt: time.Unix(1e9, 0),
		RunArgs: strings.Fields(runArg), CPU: "1", Memory: "1Gi"}
	if header != "" {
		o.RunArgs = append(o.RunArgs, "--header", header)
	}
	job, err := o.Job()
	if err != nil {
		return nil, err
	}
	return &job.Spec.Template.Spec.Containers[0], nil
}

// planted are credentials the fuzzer plants: none may reach a manifest.
var planted = []string{"sk-PLANTEDplantedPLANTED1234", "PA55W0RD", "QU3RYK3Y", "H34D3RV4L", "B0DYT0K3N"}

// FuzzManifestNoSecrets builds shard jobs from hostile targets, headers
// and run arguments: a manifest is either refused, or holds no argument
// that looks like a credential and none of the values that stood in a
// credential's place in what it was given (a URL's password or key, a
// credential header's value, a body's token).
func FuzzManifestNoSecrets(f *testing.F) {
	f.Add("http://vllm:8000/v1", "X-Api-Key: H34D3RV4L", "--rate 2 --duration 1m")
	f.Add("http://u:PA55W0RD@vllm:8000/v1", "", "--rate 2")
	f.Add("http://vllm:8000/v1?key=QU3RYK3Y", "", "")
	f.Add("http://vllm:8000/v1", "", `--extra-body {"access_token":"B0DYT0K3N"}`)
	f.Add("http://vllm:8000/v1", "Authorization: Bearer sk-PLANTEDplantedPLANTED1234", "")
	f.Add("http://vllm:8000/v1", "", "--api-key sk-PLANTEDplantedPLANTED1234")
	f.Add("http://vllm:8000/v1", "", "--server-metrics-url http://vllm:8000/metrics?token=QU3RYK3Y")
	f.Fuzz(func(t *testing.T, target, header, runArg string) {
		c, err := hostileJob(target, header, runArg)
		if err != nil {
			return
		}
		var secrets []string
		for _, in := range append([]string{target, header}, strings.Fields(runArg)...) {
			if SecretIn(in) == "" {
				continue
			}
			for _, p := range planted {
				if strings.Contains(in, p) {
					secrets = append(secrets, p)
				}
			}
		}
		for _, a := range c.Args {
			if what := SecretIn(a); what != "" {
				t.Fatalf("argument %q carries %s", a, what)
			}
			for _, p := range secrets {
				if strings.Contains(a, p) {
					t.Fatalf("argument %q holds %s, given as a credential", a, p)
				}
			}
		}
		for _, e := range c.Env {
			if e.Value != "" && e.Name != "KNEE_RUN_NONCE" {
				t.Fatalf("env %s is set in clear", e.Name)
			}
		}
	})
}

// TestSecretsComeFromSecrets: a target, headers and a metrics URL given
// as Secrets reach the pod as references its kubelet fills, never as
// values.
func TestSecretsComeFromSecrets(t *testing.T) {
	o := ShardJob{Name: "j", Image: "knee:1", Shards: 2, TargetSecret: &SecretRef{"vllm", "url"}, StartAt: time.Unix(1e9, 0),
		Headers: []HeaderSecret{{"X-Api-Key", SecretRef{"vllm", "key"}}}, MetricsURLSecret: &SecretRef{"vllm", "metrics"}, CPU: "1", Memory: "1Gi"}
	job, err := o.Job()
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	for _, want := range []string{"$(KNEE_TARGET)", "X-Api-Key:$(KNEE_HEADER_1)", "$(KNEE_METRICS_URL)"} {
		if !slices.Contains(c.Args, want) {
			t.Errorf("args %q lack %s", c.Args, want)
		}
	}
	refs := map[string]string{}
	for _, e := range c.Env {
		if e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil {
			refs[e.Name] = e.ValueFrom.SecretKeyRef.Name + ":" + e.ValueFrom.SecretKeyRef.Key
		}
	}
	for name, want := range map[string]string{"KNEE_TARGET": "vllm:url", "KNEE_HEADER_1": "vllm:key", "KNEE_METRICS_URL": "vllm:metrics"} {
		if refs[name] != want {
			t.Errorf("%s from %q, want %s", name, refs[name], want)
		}
	}
	for _, bad := range []ShardJob{{Name: "j", Image: "not an image", Shards: 1, Target: "http://x/v1"},
		{Name: "j", Image: "knee:1", Shards: 1, Target: "ftp://x/v1"}, {Name: "j", Image: "knee:1", Shards: 1, Target: "http://x/v1", ResultsClaim: "Not_A_Claim"}} {
		if _, err := bad.Job(); err == nil {
			t.Errorf("%+v: no error", bad)
		}
	}
}
