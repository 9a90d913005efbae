#include "app-dashboard/ui/enrollmentdialog.h"

#include "app-dashboard/ui/plainlabel.h"

#include <QStackedWidget>
#include <QVBoxLayout>

namespace cloop::dashboard {

EnrollmentDialog::EnrollmentDialog(const QString &title, const QString &actionText,
    const QString &where, qint64 reissueFor, QWidget *parent)
    : FormDialog(title, actionText, parent)
    , m_reissueFor(reissueFor)
    , m_pages(new QStackedWidget(this))
    , m_commandView(new EnrollmentCommandView(where, this))
{
    m_pages->addWidget(m_commandView);
    setFormWidth(520);
}

void EnrollmentDialog::setFirstPage(QWidget *page)
{
    m_pages->insertWidget(0, page);
    m_pages->setCurrentIndex(0);
    // Now that the fields are there, so that Tab walks them before the buttons.
    auto *content = new QVBoxLayout;
    content->addWidget(m_pages);
    setContent(content);
}

void EnrollmentDialog::setReissueExplanation(const QString &text)
{
    auto *explain = new PlainLabel(text, this);
    explain->setObjectName(QStringLiteral("explain"));
    explain->setWordWrap(true);
    setFirstPage(explain);
}

void EnrollmentDialog::presentCommand(
    const QString &command, const QString &installCommand, const QDateTime &validUntil)
{
    m_pages->setCurrentWidget(m_commandView);
    m_commandView->present(command, installCommand, validUntil, m_reissueFor > 0);
    settle(tr("Close"));
}

} // namespace cloop::dashboard
