package dashboard

import (
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"time"

	"github.com/hostmint/hostmint/apierror"
	"github.com/hostmint/hostmint/hostnames"
	"github.com/hostmint/hostmint/httperr"
)

// The operator's look-up of who holds a hostname or an address (or every
// hostname of an account): the rule GET /api/admin/hostnames calls.

// opFindListed is how many hostnames a page of the look-up shows.
const opFindListed = 50

type opFoundRow struct {
	ID, Name, IP, State, AccountID, Owner string
	CreatedAt                             int64
}

type opFindView struct {
	Query, Account string // what was asked: a name or an address, or an account id
	Rows           []opFoundRow
	Asked          bool
	Older, Newest  string // the next page's and the first page's URLs, "" when there is none
	Error          string
}

func opFindURL(q, account, cursor string) string {
	v := url.Values{}
	for k, s := range map[string]string{"q": q, "account": account, "cursor": cursor} {
		if s != "" {
			v.Set(k, s)
		}
	}
	return Prefix + "operator/find?" + v.Encode()
}

func (h *Handler) opFindPage(w http.ResponseWriter, r *http.Request, v *visit) {
	params := r.URL.Query()
	fv := opFindView{Query: strings.TrimSpace(params.Get("q")), Account: strings.TrimSpace(params.Get("account"))}
	l := hostnames.Lookup{AccountID: fv.Account, Cursor: params.Get("cursor"), Limit: opFindListed}
	if _, err := netip.ParseAddr(fv.Query); err == nil {
		l.IP = fv.Query
	} else {
		l.Hostname = fv.Query
	}
	status := http.StatusOK
	if fv.Asked = fv.Query != "" || fv.Account != ""; fv.Asked {
		found, err := h.hostnames.Find(r.Context(), l)
		if p, ok := apierror.As(err); ok {
			status, fv.Error = httperr.Status(p.Code), p.Message
		} else if err != nil {
			h.failed(w, r, err)
			return
		} else {
			ids := make([]string, len(found.Hostnames))
			for i, hn := range found.Hostnames {
				ids[i] = hn.AccountID
			}
			owners, err := h.accounts.Names(r.Context(), ids)
			if err != nil {
				h.failed(w, r, err)
				return
			}
			now := time.Now()
			for _, hn := range found.Hostnames {
				var addrs []string
				for _, a := range hn.ServedAddrs() {
					addrs = append(addrs, a.String())
				}
				fv.Rows = append(fv.Rows, opFoundRow{ID: hn.ID, Name: hn.Name, IP: strings.Join(addrs, " "),
					State: h.hostnames.Status(&hn, now), AccountID: hn.AccountID, Owner: owners[hn.AccountID], CreatedAt: hn.CreatedAt})
			}
			if found.Next != "" {
				fv.Older = opFindURL(fv.Query, fv.Account, found.Next)
			}
			if l.Cursor != "" {
				fv.Newest = opFindURL(fv.Query, fv.Account, "")
			}
		}
	}
	h.renderOp(w, status, "operator_find", "Find hostnames", v, fv)
}
