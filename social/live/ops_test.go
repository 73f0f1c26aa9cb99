package live

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckNamesTheBadItem(t *testing.T) {
	long := strings.Repeat("x", MaxIDBytes+1)
	for _, c := range []struct{ body, msg string }{
		{`{"ops":[]}`, "no operation"},
		{`{"ops":[{"op":"put_friend","user":"a","friend":"a"}]}`, `ops[0] (put_friend): invalid: user "a" cannot be its own friend`},
		{`{"ops":[{"op":"put_user","user":"a","profile":{}},{"op":"put_friend","user":"b","friend":""}]}`, "ops[1] (put_friend): invalid: friend is missing"},
		{`{"ops":[{"op":"put_friend","user":"a","friend":"b"},{"op":"put_friend","user":"b","friend":"a"}]}`, "ops[1] (put_friend): invalid: repeats ops[0]"},
		{`{"ops":[{"op":"put_user","user":"a"}]}`, "put_user needs a profile"},
		{`{"ops":[{"op":"drop_group","user":"a","group":"g"}]}`, `unknown op "drop_group"`},
		{`{"ops":[{"op":"delete_user","user":" a"}]}`, "no surrounding space"},
		{`{"ops":[{"op":"delete_user","user":"a,b"}]}`, "no commas"},
		{`{"ops":[{"op":"delete_user","user":"a/b"}]}`, "user ids go in URL paths"},
		{`{"ops":[{"op":"delete_user","user":"` + long + `"}]}`, "257 bytes long, the limit is 256"},
		{`{"ops":[{"op":"delete_user","user":"a\u0007"}]}`, "control character"},
		{`{"ops":[{"op":"put_member","user":"a","group":"0/circle1"},{"op":"delete_user","user":"a","group":"g"}]}`, "ops[1] (delete_user): invalid: delete_user takes user only"},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"tags":["x","y","x"]}}]}`, `tags[2] "x" repeats tags[0]`},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"faves":[""]}}]}`, "faves[0] is empty"},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"photos":[{"visual":[1,2]},{"visual":[1]}]}}]}`, "photos[1].visual has 1 values, the profile's first visual 2"},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"photos":[{"geo":{"lat":91,"lon":0}}]}}]}`, "photos[0].geo (91, 0) outside"},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"photos":[{"id":"p"},{"id":"p"}]}}]}`, `photos[1].id "p" repeats photos[0]`},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"photos":[{"visual":[NaN]}]}}]}`, "invalid character 'N'"},
		{`{"ops":[{"op":"put_user","user":"a","profile":{"colour":"red"}}]}`, `unknown field "colour"`},
		{`{"ops":[{"op":"delete_user","user":"a","count":3}]}`, "count, format and source are not fields"},
		{`{"ops":[{"op":"delete_user","user":"a"}]} {}`, "data after the batch object"},
	} {
		_, err := DecodeBatch(strings.NewReader(c.body))
		if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want one with %q", c.body, err, c.msg)
		}
	}
	many := `{"ops":[` + strings.Repeat(`{"op":"delete_user","user":"a"},`, MaxOps) + `{"op":"delete_user","user":"b"}]}`
	if _, err := DecodeBatch(strings.NewReader(many)); err == nil || !strings.Contains(err.Error(), "10001 operations, the limit is 10000") {
		t.Errorf("an over-long batch: %v", err)
	}
	ops, err := DecodeBatch(strings.NewReader(`{"ops":[{"op":"put_user","user":"a","profile":{"tags":["x"],"photos":[{"visual":[0.5,1e3],"geo":{"lat":1,"lon":2},"time":"2010-06-01T12:00:00Z"}]}},` +
		`{"op":"put_friend","user":"a","friend":"b"},{"op":"delete_friend","user":"a","friend":"c"},{"op":"put_member","user":"a","group":"0/circle1"},{"op":"delete_member","user":"b","group":"g"}]}`))
	if err != nil || len(ops) != 5 || ops[0].Profile.Photos[0].Visual[1] != 1000 {
		t.Fatalf("a good batch: %v, %+v", err, ops)
	}
}
