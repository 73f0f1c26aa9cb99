package live

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeBatch: any body is a checked batch or an ErrInvalid, and a
// batch that decodes applies to an empty state, all or nothing.
func FuzzDecodeBatch(f *testing.F) {
	for _, s := range []string{
		`{"ops":[{"op":"put_user","user":"a","profile":{"tags":["x"],"photos":[{"visual":[1,2]}]}},{"op":"put_user","user":"b","profile":{}},{"op":"put_friend","user":"a","friend":"b"}]}`,
		`{"ops":[{"op":"put_user","user":"a","profile":{}},{"op":"put_member","user":"a","group":"g"},{"op":"delete_user","user":"a"}]}`,
		`{"ops":[{"op":"delete_friend","user":"a","friend":"b"}]}`,
		`{"ops":[{"op":"put_friend","user":"a","friend":"a"}]}`,
		`{"ops":null}`, `[]`, `{`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		ops, err := DecodeBatch(bytes.NewReader(body))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		st := newState()
		before := len(st.ops())
		if _, _, err := st.apply(ops); err != nil {
			if !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("apply: %v", err)
			}
			if len(st.ops()) != before || len(st.users) != 0 || len(st.members) != 0 {
				t.Fatalf("a refused batch changed the state: %+v", st.ops())
			}
			return
		}
		if _, err := st.dataset(); err != nil {
			t.Fatalf("an applied batch makes no data set: %v", err)
		}
	})
}
