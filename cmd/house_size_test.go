package cmd

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestHouseStaysSmall holds the code to the house's sizes: no non-test
// file over 450 lines, and at most 20 functions over 60 lines, so a hub
// that grows with every feature shows here before it shows in review.
func TestHouseStaysSmall(t *testing.T) {
	t.Parallel()
	fset := token.NewFileSet()
	var long []string
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != ".." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		if n := fset.Position(f.End()).Line; n > 450 {
			t.Errorf("%s: %d lines, over 450", path, n)
		}
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Body != nil {
				if n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1; n > 60 {
					long = append(long, path+":"+fn.Name.Name)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(long) > 20 {
		t.Errorf("%d functions over 60 lines, at most 20: %v", len(long), long)
	}
}
