package kube

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

var update = flag.Bool("update", false, "rewrite the manifests in deploy/kubernetes")

// examples are the manifests shipped in deploy/kubernetes, built from
// fixed inputs so the files stay what the code prints.
func examples(t *testing.T) map[string][]byte {
	t.Helper()
	job, err := ShardJob{Name: "knee-shards", Image: "ghcr.io/kneebench/knee:latest", Shards: 4,
		Target: "http://vllm.default.svc.cluster.local:8000/v1", StartAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Nonce: "0c0ffee0",
		RunArgs: []string{"--model", "meta-llama/Llama-3.1-8B-Instruct", "--rate", "40", "--duration", "5m", "--dataset", "/inputs/prompts.jsonl", "--max-tokens", "128"},
		CPU:     "1", Memory: "1Gi", APIKey: &SecretRef{Name: "vllm-key", Key: "api-key"}, InputsConfigMap: "knee-inputs"}.Job()
	if err != nil {
		t.Fatal(err)
	}
	dep, svc, err := SimFleet{Name: "knee-sim", Image: "ghcr.io/kneebench/knee:latest", Replicas: 4,
		SimArgs: []string{"--preset", "h100-80gb/llama-3.1-8b"}, CPU: "500m", Memory: "512Mi"}.Objects()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for name, objs := range map[string][]any{"shards-job.yaml": {job}, "sim-fleet.yaml": {dep, svc}} {
		y, err := YAML(objs...)
		if err != nil {
			t.Fatal(err)
		}
		out[name] = append([]byte("# Printed by knee k8s (see README.md here); regenerate with go test ./kube -update.\n"), y...)
	}
	return out
}

// TestManifestsAreCurrent: deploy/kubernetes holds what the code prints.
func TestManifestsAreCurrent(t *testing.T) {
	for name, want := range examples(t) {
		path := filepath.Join("..", "deploy", "kubernetes", name)
		if *update {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s differs from what knee k8s prints; run go test ./kube -update", path)
		}
	}
}

// documents splits a YAML stream and decodes each document strictly (an
// unknown or mistyped field is an error) into the typed object of its
// kind.
func documents(t *testing.T, data []byte) []any {
	t.Helper()
	var objs []any
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var head struct{ APIVersion, Kind string }
		if err := yaml.Unmarshal([]byte(doc), &head); err != nil {
			t.Fatal(err)
		}
		var obj any
		switch head.APIVersion + "/" + head.Kind {
		case "batch/v1/Job":
			obj = &batchv1.Job{}
		case "apps/v1/Deployment":
			obj = &appsv1.Deployment{}
		case "v1/Service":
			obj = &corev1.Service{}
		default:
			t.Fatalf("a document of kind %s %s", head.APIVersion, head.Kind)
		}
		if err := yaml.UnmarshalStrict([]byte(doc), obj); err != nil {
			t.Fatalf("%s: %v", head.Kind, err)
		}
		objs = append(objs, obj)
	}
	return objs
}

// TestShippedManifestsParse decodes every shipped manifest as the
// Kubernetes objects it claims to be and checks what makes them work: an
// Indexed Job with completions = parallelism = shards, one start instant
// for all, no CPU limit; a headless Service selecting the Deployment's
// pods on the port they serve.
func TestShippedManifestsParse(t *testing.T) {
	job, err := os.ReadFile(filepath.Join("..", "deploy", "kubernetes", "shards-job.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs := documents(t, job)
	j, ok := objs[0].(*batchv1.Job)
	if len(objs) != 1 || !ok {
		t.Fatalf("shards-job.yaml holds %d objects, want one Job", len(objs))
	}
	s := j.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion || *s.Completions != 4 || *s.Parallelism != 4 {
		t.Errorf("job spec %+v: want Indexed, 4 completions, 4 in parallel", s)
	}
	c := s.Template.Spec.Containers[0]
	args := strings.Join(c.Args, " ")
	for _, want := range []string{"run --base-url ", "--shards 4", "--start-at 2026-12-01T12:00:00Z", "--output - --quiet", "--rate 40"} {
		if !strings.Contains(args, want) {
			t.Errorf("args %q lack %q", args, want)
		}
	}
	if _, limited := c.Resources.Limits[corev1.ResourceCPU]; limited {
		t.Error("a CPU limit would throttle the client")
	}
	if !slices.ContainsFunc(c.Env, func(e corev1.EnvVar) bool { return e.Name == "KNEE_RUN_NONCE" && e.Value != "" }) {
		t.Error("the shards do not share a prompt nonce")
	}
	fleet, err := os.ReadFile(filepath.Join("..", "deploy", "kubernetes", "sim-fleet.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	objs = documents(t, fleet)
	if len(objs) != 2 {
		t.Fatalf("sim-fleet.yaml holds %d objects, want a Deployment and a Service", len(objs))
	}
	dep, svc := objs[0].(*appsv1.Deployment), objs[1].(*corev1.Service)
	if svc.Spec.ClusterIP != corev1.ClusterIPNone {
		t.Errorf("the Service is not headless (clusterIP %q): a router would see one address", svc.Spec.ClusterIP)
	}
	for k, v := range svc.Spec.Selector {
		if dep.Spec.Template.Labels[k] != v {
			t.Errorf("the Service selects %s=%s, which the Deployment's pods do not carry", k, v)
		}
	}
	if p := dep.Spec.Template.Spec.Containers[0].Ports[0].ContainerPort; p != svc.Spec.Ports[0].TargetPort.IntVal {
		t.Errorf("the pods serve on %d, the Service targets %d", p, svc.Spec.Ports[0].TargetPort.IntVal)
	}
}

func TestResultsClaim(t *testing.T) {
	j, err := ShardJob{Name: "k", Image: "i", Shards: 2, Target: "http://t/v1", ResultsClaim: "knee-results"}.Job()
	if err != nil {
		t.Fatal(err)
	}
	c := j.Spec.Template.Spec.Containers[0]
	if !slices.Contains(c.Args, "/results/shard-$(JOB_COMPLETION_INDEX).json") || len(c.VolumeMounts) != 1 || j.Spec.Template.Spec.Volumes[0].PersistentVolumeClaim.ClaimName != "knee-results" {
		t.Errorf("with a results claim: args %q, mounts %+v", c.Args, c.VolumeMounts)
	}
	if _, err := (ShardJob{Name: "k", Image: "i", Shards: 2, Target: "t", CPU: "two"}).Job(); err == nil {
		t.Error("a CPU request of \"two\" was accepted")
	}
}

// TestManifestsSafeByConstruction: names the API server would reject are
// refused before printing; the API key comes from a Secret, never a value
// in the manifest; the inputs ConfigMap is mounted read-only in every pod.
func TestManifestsSafeByConstruction(t *testing.T) {
	base := ShardJob{Name: "knee-shards", Image: "knee", Shards: 2, Target: "http://t/v1", CPU: "1", Memory: "1Gi"}
	for _, tc := range []struct{ name, namespace, configMap string }{
		{"Knee", "", ""}, {"knee_shards", "", ""}, {strings.Repeat("k", 64), "", ""}, {"knee", "a.b", ""}, {"knee", "", "Bad_Map"},
	} {
		j := base
		j.Name, j.Namespace, j.InputsConfigMap = tc.name, tc.namespace, tc.configMap
		if _, err := j.Job(); err == nil {
			t.Errorf("job %+v printed; the API server would refuse it", tc)
		}
		f := SimFleet{Name: tc.name, Namespace: tc.namespace, InputsConfigMap: tc.configMap, Image: "knee", Replicas: 1}
		if _, _, err := f.Objects(); err == nil {
			t.Errorf("fleet %+v printed; the API server would refuse it", tc)
		}
	}
	// Counts past what the API holds: an Indexed Job's 100,000 pods at
	// once, a Deployment's int32 (3e9 once printed -1294967296).
	for _, n := range []int{MaxShards + 1, 3_000_000_000} {
		j := base
		j.Shards = n
		if _, err := j.Job(); err == nil {
			t.Errorf("a job of %d shards printed; the API server would refuse it", n)
		}
	}
	most := base
	most.Shards = MaxShards
	if _, err := most.Job(); err != nil {
		t.Errorf("a job of %d shards: %v", MaxShards, err)
	}
	if _, _, err := (SimFleet{Name: "fleet", Image: "knee", Replicas: 3_000_000_000}).Objects(); err == nil {
		t.Error("a fleet of 3e9 replicas printed; its count overflows the API's int32")
	}
	j := base
	j.APIKey, j.InputsConfigMap = &SecretRef{Name: "key", Key: "token"}, "inputs"
	job, err := j.Job()
	if err != nil {
		t.Fatal(err)
	}
	c := job.Spec.Template.Spec.Containers[0]
	var found bool
	for _, e := range c.Env {
		if e.Name == APIKeyEnv {
			found = e.Value == "" && e.ValueFrom != nil && e.ValueFrom.SecretKeyRef.Name == "key" && e.ValueFrom.SecretKeyRef.Key == "token"
		}
	}
	if !found {
		t.Errorf("env %+v: want %s from Secret key/token, no value", c.Env, APIKeyEnv)
	}
	if len(c.VolumeMounts) != 1 || c.VolumeMounts[0].MountPath != InputsDir || !c.VolumeMounts[0].ReadOnly ||
		job.Spec.Template.Spec.Volumes[0].ConfigMap == nil || job.Spec.Template.Spec.Volumes[0].ConfigMap.Name != "inputs" {
		t.Errorf("mounts %+v volumes %+v: want ConfigMap inputs read-only at %s", c.VolumeMounts, job.Spec.Template.Spec.Volumes, InputsDir)
	}
	for _, bad := range []string{"Bad_Name", "key:", "key:a/b"} {
		if _, err := ParseSecretRef(bad, "api-key"); err == nil {
			t.Errorf("ParseSecretRef(%q) accepted", bad)
		}
	}
	if r, err := ParseSecretRef("vllm", "api-key"); err != nil || r != (SecretRef{"vllm", "api-key"}) {
		t.Errorf("ParseSecretRef(vllm) = %+v, %v", r, err)
	}
}

// FuzzManifestCarriesArgs: whatever a run argument holds — a merge key,
// NEL (which YAML 1.1 reads as a line break), DEL, line separators, a
// byte-order mark, newlines, words YAML takes for booleans — the Job the
// cluster reads back (sigs.k8s.io/yaml, as kubectl) runs it unchanged,
// or knee refuses it (invalid UTF-8, a credential), never writes it
// altered.
func FuzzManifestCarriesArgs(f *testing.F) {
	for _, s := range []string{"<<", "a\u0085b", "x\x7fy", "a\u2028b\u2029c", "\ufeffbom", "two\nlines", "yes", "~", "- a", "tab\there", "\x00nul", "é\u200b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		job, err := ShardJob{Name: "knee-shards", Image: "ghcr.io/kneebench/knee:latest", Shards: 2, Target: "http://vllm:8000/v1",
			StartAt: time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC), Nonce: "0c0ffee0", RunArgs: []string{"--prompt", s}}.Job()
		if err != nil {
			return
		}
		y, err := YAML(job)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		var back batchv1.Job
		if err := yaml.Unmarshal(y, &back); err != nil {
			t.Fatalf("%q: the manifest does not parse: %v\n%s", s, err, y)
		}
		args := back.Spec.Template.Spec.Containers[0].Args
		if i := slices.Index(args, "--prompt"); i < 0 || i+1 >= len(args) || args[i+1] != s {
			t.Fatalf("%q came back as %q", s, args)
		}
	})
}
