#include "app-dashboard/ui/reasondialog.h"

#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace cloop::dashboard {

ReasonDialog::ReasonDialog(const QString &title, const QString &consequence, const QString &actionText,
                           bool reasonRequired, Action action, QWidget *parent)
    : FormDialog(title, actionText, parent),
      m_action(std::move(action)),
      m_reasonRequired(reasonRequired),
      m_reason(new QLineEdit(this))
{
    auto *what = new QLabel(consequence, this);
    what->setWordWrap(true);
    m_reason->setObjectName(QStringLiteral("reason"));
    m_reason->setPlaceholderText(reasonRequired ? tr("Reason (kept in the audit log)")
                                                : tr("Reason (optional, kept in the audit log)"));
    auto *content = new QVBoxLayout;
    content->addWidget(what);
    content->addWidget(m_reason);
    setContent(content);
    setMinimumWidth(460);
    connect(m_reason, &QLineEdit::textChanged, this, &ReasonDialog::revalidate);
    revalidate();
}

QString ReasonDialog::problem() const
{
    return m_reasonRequired && m_reason->text().trimmed().isEmpty() ? tr("Say why, for the audit log.") : QString();
}

void ReasonDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_action(m_reason->text().trimmed(), context, std::move(done));
}

} // namespace cloop::dashboard
