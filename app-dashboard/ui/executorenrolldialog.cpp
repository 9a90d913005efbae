#include "app-dashboard/ui/executorenrolldialog.h"

#include "common/api/daemonname.h"

#include <QFormLayout>
#include <QJsonObject>
#include <QLineEdit>

namespace cloop::dashboard {

ExecutorEnrollDialog::ExecutorEnrollDialog(HubApi *api, QWidget *parent)
    : EnrollmentDialog(tr("Enroll an executor"), tr("Enroll"),
        tr("the machine that will run sandboxes"), 0, parent)
    , m_api(api)
    , m_name(new QLineEdit(this))
{
    m_name->setObjectName(QStringLiteral("name"));
    m_name->setPlaceholderText(tr("buildbox"));
    auto *askPage = new QWidget(this);
    auto *form = new QFormLayout(askPage);
    form->setContentsMargins(0, 0, 0, 0);
    form->addRow(tr("&Name:"), m_name);
    setFirstPage(askPage);
    connect(m_name, &QLineEdit::textChanged, this, &ExecutorEnrollDialog::revalidate);
    revalidate();
}

ExecutorEnrollDialog::ExecutorEnrollDialog(
    HubApi *api, qint64 executorId, const QString &name, QWidget *parent)
    : EnrollmentDialog(tr("New enrollment command for %1").arg(name), tr("Issue command"),
        tr("the machine that will run sandboxes"), executorId, parent)
    , m_api(api)
    , m_name(new QLineEdit(name, this))
{
    m_name->setVisible(false);
    setReissueExplanation(
        tr("%1 has not connected yet. Its earlier command stops working, and a new single-use "
           "command is issued for the same executor.")
            .arg(name));
    revalidate();
}

QString ExecutorEnrollDialog::problem() const
{
    if (reissueFor() > 0)
        return {};
    const QString name = m_name->text().trimmed();
    if (name.isEmpty())
        return tr("Give the executor a name.");
    if (Status valid = api::validateDaemonName(name, QLatin1StringView("executor")); !valid)
        return valid.error().message;
    return {};
}

void ExecutorEnrollDialog::carryOut(QObject *context, HubApi::Callback done)
{
    if (reissueFor() > 0) {
        m_api->post(QStringLiteral("/api/executors/%1/enrollment").arg(reissueFor()), {}, context,
            std::move(done));
        return;
    }
    m_api->post(QStringLiteral("/api/executors"),
        QJsonObject { { QStringLiteral("name"), m_name->text().trimmed() } }, context,
        std::move(done));
}

void ExecutorEnrollDialog::succeeded(const QJsonObject &answer)
{
    presentEnrollment<api::Executor>(answer);
}

} // namespace cloop::dashboard
