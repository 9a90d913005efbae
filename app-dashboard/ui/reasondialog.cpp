#include "app-dashboard/ui/reasondialog.h"

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/ui/plainlabel.h"

#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace cloop::dashboard {

ReasonDialog::ReasonDialog(const QString &title, const QString &consequence,
    const QString &actionText, bool reasonRequired, Action action, QWidget *parent)
    : FormDialog(title, actionText, parent)
    , m_action(std::move(action))
    , m_reasonRequired(reasonRequired)
    , m_reason(new QLineEdit(this))
{
    auto *what = new PlainLabel(consequence, this);
    what->setWordWrap(true);
    m_reason->setObjectName(QStringLiteral("reason"));
    m_reason->setPlaceholderText(reasonRequired ? tr("Reason (kept in the audit log)")
                                                : tr("Reason (optional, kept in the audit log)"));
    auto *content = new QVBoxLayout;
    content->addWidget(what);
    content->addWidget(m_reason);
    setContent(content);
    setFormWidth(460);
    connect(m_reason, &QLineEdit::textChanged, this, &ReasonDialog::revalidate);
    revalidate();
}

QString ReasonDialog::problem() const
{
    return m_reasonRequired && m_reason->text().trimmed().isEmpty()
        ? tr("Say why, for the audit log.")
        : QString();
}

void ReasonDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_action(m_reason->text().trimmed(), context, std::move(done));
}

ReasonDialog *makeUnbindDialog(ForwardersClient *forwarders, qint64 bindingId,
    const QString &forwarder, const QString &project, QWidget *parent)
{
    return new ReasonDialog(
        ReasonDialog::tr("Unbind %1").arg(forwarder),
        ReasonDialog::tr("%1 stops lending its device to %2. Runs using it now lose it at once.")
            .arg(forwarder, project),
        ReasonDialog::tr("Unbind"), true,
        [forwarders, bindingId](const QString &reason, QObject *context, HubApi::Callback done) {
            forwarders->unbind(bindingId, reason, context, std::move(done));
        },
        parent);
}

} // namespace cloop::dashboard
