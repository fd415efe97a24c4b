package accountcentre

import (
	"net/http"
	"strconv"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/latchkey-auth/latchkey/app/accounts"
	"github.com/latchkey-auth/latchkey/app/web"
	"github.com/latchkey-auth/latchkey/views"
)

// notices are the page's ?notice= values a change sends it back with.
var notices = map[string]bool{
	"SessionEnded": true, "OtherSessionsEnded": true, "MethodUnlinked": true, "EmailChangeSent": true, "EmailChanged": true,
	"AppRevokedNotice": true,
}

// maxEndedShown bounds the count of OtherSessionsEnded: far more sessions
// than one user ever holds at once.
const maxEndedShown = 100_000

// noticeCount is the notice the page shows and its {{.Count}}. Only
// OtherSessionsEnded has one: the decimal count its redirect wrote, at most
// maxEndedShown. Anything else in count (a sign, junk, a huge or missing
// number: a link made elsewhere, not latchkey's redirect) shows no notice
// rather than a number latchkey never counted.
func noticeCount(notice, count string) (string, int) {
	if notice != "OtherSessionsEnded" {
		return notice, 0
	}
	n, err := strconv.ParseUint(count, 10, 32)
	if err != nil || n > maxEndedShown {
		return "", 0
	}
	return notice, int(n)
}

// getPage is GET {base}/account: who the user is, the sign-in methods,
// the sessions, the applications, the e-mail change and deleting the
// account.
func (h *Handler) getPage(c echo.Context, rq *web.Request, u user) error {
	ctx := c.Request().Context()
	d := views.Account{
		Page: h.kit.Page(c, rq, "TitleAccount"), CSRFToken: rq.CSRFToken,
		EmailVerified: u.EmailVerified != nil, Created: day(u.CreatedAt),
		LinkURL: h.base.URL(linkAccount), UnlinkURL: h.base.URL(unlinkAccount),
		PasswordURL: h.offers.PasswordPage, PasskeysURL: h.offers.PasskeysPage, TwoFactorURL: h.offers.TwoFactorPage,
		RevokeURL: h.base.URL(revokeSession), RevokeOthersURL: h.base.URL(revokeOthers),
		DeleteConfirmWord: accounts.DeleteConfirmWord(u.User),
		Error:             pageError(c.QueryParam("error")),
	}
	if u.Name != nil {
		d.Name = *u.Name
	}
	if u.Email != nil {
		d.Email = *u.Email
	}
	if n := c.QueryParam("notice"); notices[n] {
		d.Notice, d.Count = noticeCount(n, c.QueryParam("count"))
	}
	if h.offers.Mail {
		d.ChangeEmailURL = h.base.URL(changeEmail)
	}
	if h.offers.SelfDelete {
		d.DeleteURL = h.base.URL(deleteUser)
	}
	linked, err := h.rules.LinkedAccounts(ctx, u.ID)
	if err != nil {
		return err
	}
	has := map[string]bool{}
	for _, a := range linked {
		item := views.LinkedAccount{ID: a.ID, ProviderName: h.providerName(a.Provider), Linked: day(a.CreatedAt)}
		if a.Label != nil {
			item.Label = *a.Label
		}
		d.Linked = append(d.Linked, item)
		has[a.Provider] = true
	}
	for _, p := range h.linkable(has) {
		d.CanLink = append(d.CanLink, views.LinkOption{ID: p.ID, Name: h.providerName(p.ID)})
	}
	if h.offers.PasswordPage != "" {
		if d.HasPassword, err = h.rules.HasPassword(ctx, u.ID); err != nil {
			return err
		}
	}
	if h.offers.PasskeysPage != "" {
		keys, err := h.rules.ListPasskeys(ctx, u.ID)
		if err != nil {
			return err
		}
		d.PasskeyCount = len(keys)
	}
	if h.twoFactor != nil {
		if d.TwoFactorOn, err = h.twoFactor(ctx, u.ID); err != nil {
			return err
		}
	}
	if h.apps != nil {
		d.RevokeAppURL = h.base.URL(revokeApp)
		if d.Apps, err = h.appItems(ctx, u.ID); err != nil {
			return err
		}
	}
	records, err := h.rules.ListSessions(ctx, h.browser(c), u.ID)
	if err != nil {
		return err
	}
	for _, r := range records {
		d.Sessions = append(d.Sessions, views.SessionItem{ID: r.ID, Device: r.Device, Network: r.Network,
			Started: minute(r.SignedIn), LastSeen: minute(r.LastSeen), Current: r.Current})
	}
	status := http.StatusOK
	if d.Error != "" {
		status = http.StatusBadRequest
	}
	return web.Render(c, status, views.AccountPage(d))
}

func day(t time.Time) string    { return t.UTC().Format(time.DateOnly) }
func minute(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }
