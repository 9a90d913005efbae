#pragma once

#include "app-dashboard/ui/enrollmentcommandview.h"
#include "app-dashboard/ui/formdialog.h"

#include "common/api/enrollment.h"

class QStackedWidget;

namespace cloop::dashboard {

// What + Enroll forwarder and + Enroll executor share: a first page that
// asks for the new daemon's fields (or, for a daemon that never redeemed
// its command, says what a new one does), then the one-time command.
class EnrollmentDialog : public FormDialog
{
    Q_OBJECT

public:
    EnrollmentCommandView *commandView() const { return m_commandView; }

protected:
    // `reissueFor`: the daemon a new command is for; 0 to enroll a new one.
    // `where`: the machine the command is to run on.
    EnrollmentDialog(const QString &title, const QString &actionText, const QString &where,
        qint64 reissueFor, QWidget *parent);

    qint64 reissueFor() const { return m_reissueFor; }
    // The first page, set once: the fields, or for a re-issue the words that
    // say what happens to the earlier command.
    void setFirstPage(QWidget *page);
    void setReissueExplanation(const QString &text);

    template <typename Daemon> void presentEnrollment(const QJsonObject &answer)
    {
        const auto enrollment
            = api::recordIn<api::Enrollment<Daemon>>(answer).value_or(api::Enrollment<Daemon> {});
        presentCommand(enrollment.command, enrollment.installCommand, enrollment.tokenExpiresAt);
    }

private:
    void presentCommand(
        const QString &command, const QString &installCommand, const QDateTime &validUntil);

    qint64 m_reissueFor;
    QStackedWidget *m_pages;
    EnrollmentCommandView *m_commandView;
};

} // namespace cloop::dashboard
