package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestReviewActionScript runs the steps of the repository's GitHub Action
// (.github/ssgen-review.sh) in a throwaway git repository: a change that
// only adds a key passes and posts its doc, one that removes a key fails
// with an annotation on the pull request, a stale generated file fails
// check, and a change that leaves the schema alone writes no doc.
func TestReviewActionScript(t *testing.T) {
	for _, tool := range []string{"git", "bash", "go"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	script, err := filepath.Abs("../../.github/ssgen-review.sh")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := filepath.Join(t.TempDir(), "ssgen")
	if out, err := exec.CommandContext(ctx, "go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	repo := t.TempDir()
	sh := func(args ...string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, args[0], args[1:]...)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_CONFIG_NOSYSTEM=1", "HOME="+repo)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return strings.TrimSpace(string(out))
	}
	commit := func(schema, msg string) string {
		t.Helper()
		writeGenFile(t, filepath.Join(repo, "plant", "ssgen.yaml"), schema)
		sh(bin, "generate", "--schema", "plant/ssgen.yaml")
		sh("git", "add", "-A")
		sh("git", "commit", "-q", "-m", msg)
		return sh("git", "rev-parse", "HEAD")
	}
	review := func(base string) (code int, stdout string, doc string) {
		t.Helper()
		docFile := filepath.Join(t.TempDir(), "doc.md")
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Dir = repo
		cmd.Env = append(os.Environ(), "SSGEN="+bin, "SSGEN_BASE="+base, "SSGEN_DOC_FILE="+docFile)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err := cmd.Run()
		code = cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("script: %v\n%s", err, errOut.String())
		}
		d, _ := os.ReadFile(docFile)
		return code, out.String() + errOut.String(), string(d)
	}

	sh("git", "init", "-q", "-b", "main")
	const v1 = `version: 1
package: plant
groups:
  Thermostat:
    path: thermostats/{id}
    params: {id: string}
    keys:
      SetPoint: {path: setPoint, type: float64}
      Reading: {path: reading, type: float64, encoding: string}
`
	base := commit(v1, "base")

	// A compatible change: a new key.
	added := commit(strings.Replace(v1, "      Reading:", "      Mode: {path: mode, type: string, encoding: string}\n      Reading:", 1), "add a key")
	code, out, doc := review(base)
	if code != 0 || strings.Contains(out, "::error") {
		t.Fatalf("a compatible change: exit %d\n%s", code, out)
	}
	if !strings.Contains(doc, "<!-- ssgen-review -->") || !strings.Contains(doc, "<code>plant/ssgen.yaml</code>") ||
		!strings.Contains(doc, "```mermaid") || !strings.Contains(doc, "`Thermostat.Mode`") {
		t.Fatalf("doc of the changed schema:\n%s", doc)
	}

	// A breaking change: a key removed, annotated where it was declared.
	commit(strings.Replace(v1, "      Reading: {path: reading, type: float64, encoding: string}\n", "", 1), "remove a key")
	code, out, _ = review(added)
	if code != 1 || !strings.Contains(out, "::error file=plant/ssgen.yaml,title=ssgen breaking%3A key-removed::key Thermostat.Reading") {
		t.Fatalf("a breaking change: exit %d\n%s", code, out)
	}

	// A generated file edited by hand: check fails, annotated.
	gen := filepath.Join(repo, "plant", "plant_ssgen.go")
	src, err := os.ReadFile(gen)
	if err != nil {
		t.Fatal(err)
	}
	writeTestFile(t, gen, append(src, []byte("\n// edited\n")...))
	sh("git", "commit", "-q", "-am", "edit generated code")
	head := sh("git", "rev-parse", "HEAD")
	code, out, doc = review(head)
	if code != 1 || !strings.Contains(out, "::error file=plant/plant_ssgen.go,title=ssgen check::plant/plant_ssgen.go is stale") {
		t.Fatalf("a stale generated file: exit %d\n%s", code, out)
	}
	if doc != "" {
		t.Fatalf("no schema changed since %s, yet a doc was written:\n%s", head, doc)
	}

	// A schema whose path starts with '-' is read as a file, not a flag
	// (ssgen doc -o/ssgen.yaml would write a file wherever the pull
	// request says).
	evil := filepath.Join(repo, "-o")
	writeGenFile(t, filepath.Join(evil, "ssgen.yaml"), strings.Replace(v1, "package: plant", "package: evil", 1))
	sh(bin, "generate", "--schema", "./-o/ssgen.yaml")
	sh("git", "add", "--", "-o")
	sh("git", "commit", "-q", "-m", "a schema under -o")
	code, out, doc = review(head)
	if code != 1 || !strings.Contains(doc, "<code>./-o/ssgen.yaml</code>") || !strings.Contains(out, "./-o/ssgen.yaml") {
		t.Fatalf("a schema under -o/: exit %d\n%s\ndoc:\n%s", code, out, doc)
	}

	// A base that does not exist is a usage error, not a pass.
	if code, out, _ := review("no-such-branch"); code != 2 || !strings.Contains(out, "not a revision") {
		t.Fatalf("unknown base: exit %d\n%s", code, out)
	}
	if code, out, _ := review("--output=" + filepath.Join(repo, "x")); code != 2 || !strings.Contains(out, "does not start with '-'") {
		t.Fatalf("a base that is an option: exit %d\n%s", code, out)
	}
}

// fakeGitHub is the part of GitHub's REST API that ssgen-comment.sh uses:
// who the token is, a pull request's comments (paginated), and creating
// and editing comments. Like GitHub, it lets the token edit any comment.
type fakeGitHub struct {
	mu       sync.Mutex
	user     string // GET /user's login; "" answers 403 as for an installation token
	author   string // the login new comments get
	comments []fakeComment
	nextID   int64
	patched  []int64
	refuse   bool // answer 403 to writes, as to a fork's read-only token
}

type fakeComment struct {
	ID   int64 `json:"id"`
	User struct {
		Login string `json:"login"`
	} `json:"user"`
	Body string `json:"body"`
}

func (g *fakeGitHub) add(login, body string) int64 {
	g.nextID++
	c := fakeComment{ID: g.nextID, Body: body}
	c.User.Login = login
	g.comments = append(g.comments, c)
	return c.ID
}

func (g *fakeGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if r.Header.Get("Authorization") != "Bearer test-token" {
		http.Error(w, `{"message":"Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	var in struct{ Body string }
	if r.Method != http.MethodGet {
		if g.refuse {
			http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
	}
	switch {
	case r.Method == http.MethodGet && r.URL.Path == "/user":
		if g.user == "" {
			http.Error(w, `{"message":"Resource not accessible by integration"}`, http.StatusForbidden)
			return
		}
		json.NewEncoder(w).Encode(map[string]string{"login": g.user})
	case r.Method == http.MethodGet && r.URL.Path == "/repos/o/r/issues/7/comments":
		per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		if per <= 0 || per > 100 {
			per = 30
		}
		page = max(page, 1)
		lo, hi := min((page-1)*per, len(g.comments)), min(page*per, len(g.comments))
		json.NewEncoder(w).Encode(g.comments[lo:hi])
	case r.Method == http.MethodPost && r.URL.Path == "/repos/o/r/issues/7/comments":
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]int64{"id": g.add(g.author, in.Body)})
	case r.Method == http.MethodPatch && strings.HasPrefix(r.URL.Path, "/repos/o/r/issues/comments/"):
		id, _ := strconv.ParseInt(strings.TrimPrefix(r.URL.Path, "/repos/o/r/issues/comments/"), 10, 64)
		for i := range g.comments {
			if g.comments[i].ID == id {
				g.comments[i].Body = in.Body
				g.patched = append(g.patched, id)
				json.NewEncoder(w).Encode(g.comments[i])
				return
			}
		}
		http.NotFound(w, r)
	default:
		http.NotFound(w, r)
	}
}

// TestReviewActionUpdatesOnlyItsOwnComment runs .github/ssgen-comment.sh,
// the action's comment step, against a fake GitHub API: a comment that
// someone else starts with the action's marker is never edited; the
// action's own (the workflow token's github-actions[bot], or the login
// GET /user names for a user's token) is, on any page.
func TestReviewActionUpdatesOnlyItsOwnComment(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "jq"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	script, err := filepath.Abs("../../.github/ssgen-comment.sh")
	if err != nil {
		t.Fatal(err)
	}
	const marker = "<!-- ssgen-review -->"
	doc := filepath.Join(t.TempDir(), "doc.md")
	newDoc := marker + "\n# ssgen: schemas changed\n\n`x` & \"quoted\" \\ \u00e9\n"
	writeTestFile(t, doc, []byte(newDoc))
	run := func(g *fakeGitHub, env ...string) (int, string) {
		t.Helper()
		srv := httptest.NewServer(g)
		defer srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "bash", script)
		cmd.Env = append(os.Environ(), "SSGEN_DOC_FILE="+doc, "SSGEN_PR=7", "GITHUB_REPOSITORY=o/r",
			"GITHUB_TOKEN=test-token", "GITHUB_API_URL="+srv.URL, "SSGEN_COMMENT_AUTHOR=")
		cmd.Env = append(cmd.Env, env...)
		out, err := cmd.CombinedOutput()
		code := cmd.ProcessState.ExitCode()
		if err != nil && code < 0 {
			t.Fatalf("script: %v\n%s", err, out)
		}
		return code, string(out)
	}
	body := func(g *fakeGitHub, id int64) string {
		for _, c := range g.comments {
			if c.ID == id {
				return c.Body
			}
		}
		return ""
	}

	t.Run("the workflow token's own comment, not a later one that copies the marker", func(t *testing.T) {
		g := &fakeGitHub{author: "github-actions[bot]"}
		g.add("alice", "looks good")
		ours := g.add("github-actions[bot]", marker+"\nold")
		theirs := g.add("mallory", marker+"\nnot the bot's")
		if code, out := run(g); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !slices.Equal(g.patched, []int64{ours}) || body(g, ours) != newDoc || body(g, theirs) != marker+"\nnot the bot's" || len(g.comments) != 3 {
			t.Fatalf("patched %v; comments %+v", g.patched, g.comments)
		}
	})
	t.Run("only someone else's comment has the marker: a new comment", func(t *testing.T) {
		g := &fakeGitHub{author: "github-actions[bot]"}
		theirs := g.add("mallory", marker+"\nnot the bot's")
		if code, out := run(g); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if len(g.patched) != 0 || len(g.comments) != 2 || body(g, theirs) != marker+"\nnot the bot's" ||
			g.comments[1].User.Login != "github-actions[bot]" || g.comments[1].Body != newDoc {
			t.Fatalf("patched %v; comments %+v", g.patched, g.comments)
		}
	})
	t.Run("a user's token: the login GET /user names", func(t *testing.T) {
		g := &fakeGitHub{user: "ssgen-bot", author: "ssgen-bot"}
		ours := g.add("ssgen-bot", marker+"\nold")
		g.add("github-actions[bot]", marker+"\nanother workflow's")
		if code, out := run(g); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !slices.Equal(g.patched, []int64{ours}) {
			t.Fatalf("patched %v; comments %+v", g.patched, g.comments)
		}
	})
	t.Run("an app's installation token: the comment-author input", func(t *testing.T) {
		g := &fakeGitHub{author: "my-app[bot]"}
		g.add("github-actions[bot]", marker+"\nanother workflow's")
		ours := g.add("my-app[bot]", marker+"\nold")
		if code, out := run(g, "SSGEN_COMMENT_AUTHOR=my-app[bot]"); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !slices.Equal(g.patched, []int64{ours}) {
			t.Fatalf("patched %v; comments %+v", g.patched, g.comments)
		}
	})
	t.Run("the last of its own comments, on the second page", func(t *testing.T) {
		g := &fakeGitHub{author: "github-actions[bot]"}
		for i := range 150 {
			switch i {
			case 20, 120:
				g.add("github-actions[bot]", marker+"\nold")
			default:
				g.add("mallory", marker+"\nnot the bot's")
			}
		}
		if code, out := run(g); code != 0 {
			t.Fatalf("exit %d\n%s", code, out)
		}
		if !slices.Equal(g.patched, []int64{121}) {
			t.Fatalf("patched %v", g.patched)
		}
	})
	t.Run("a read-only token fails, for the action to warn", func(t *testing.T) {
		g := &fakeGitHub{author: "github-actions[bot]", refuse: true}
		if code, out := run(g); code != 1 {
			t.Fatalf("exit %d\n%s", code, out)
		}
	})
	t.Run("bad usage", func(t *testing.T) {
		for _, env := range []string{"SSGEN_PR=7;x", "SSGEN_PR=", "GITHUB_REPOSITORY=o/r/../x", "GITHUB_TOKEN="} {
			g := &fakeGitHub{author: "github-actions[bot]"}
			if code, out := run(g, env); code != 2 || len(g.comments) != 0 {
				t.Errorf("%s: exit %d\n%s", env, code, out)
			}
		}
	})
}
