package protocol

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// vocabulary is every text this package defines that must not be typed
// out again elsewhere: the service id and the -ERR texts.
var vocabulary = map[string]string{
	"ServiceID":                       ServiceID,
	"ErrTimestampSkew":                ErrTimestampSkew,
	"ErrFencingTokenRequired":         ErrFencingTokenRequired,
	"ErrFencingTokenSkew":             ErrFencingTokenSkew,
	"ErrFencingTokenLowerVersion":     ErrFencingTokenLowerVersion,
	"ErrQuotaExceeded":                ErrQuotaExceeded,
	"ErrSyntax":                       ErrSyntax,
	"ErrNotAuthorized":                ErrNotAuthorized,
	"ErrUnknownCommand":               ErrUnknownCommand,
	"ErrWrongNumberOfArguments":       ErrWrongNumberOfArguments,
	"ErrMissingTimestamp":             ErrMissingTimestamp,
	"ErrMalformedTimestamp":           ErrMalformedTimestamp,
	"ErrKeyLengthZero":                ErrKeyLengthZero,
	"ErrPersistence":                  ErrPersistence,
	"ErrInvalidToken":                 ErrInvalidToken,
	"StatusMsgVersionNotSupported":    StatusMsgVersionNotSupported,
	"StatusMsgCorrelationDataMissing": StatusMsgCorrelationDataMissing,
	"StatusMsgSourceIDMissing":        StatusMsgSourceIDMissing,
}

// TestVocabularyTypedOnce walks the module's non-test Go files outside
// this package and fails on any that types out one of its texts: in a
// string literal at all, and anywhere in the file (comments included) for
// the service id and the texts long enough not to be ordinary words.
// Everything else refers to the constants.
func TestVocabularyTypedOnce(t *testing.T) {
	root := filepath.Join("..", "..")
	self, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			abs, _ := filepath.Abs(path)
			switch {
			case abs == self, d.Name() == "testdata", d.Name() == "interop", strings.HasPrefix(d.Name(), ".") && path != root:
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for name, text := range vocabulary {
			if len(text) >= 30 && strings.Contains(string(src), text) {
				t.Errorf("%s types out %s; use protocol.%s", path, name, name)
			}
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, src, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for name, text := range vocabulary {
				if s == text || strings.Contains(s, ErrorPrefix+text) {
					t.Errorf("%s: string literal %s is protocol.%s", path, lit.Value, name)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
