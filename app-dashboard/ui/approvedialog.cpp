#include "app-dashboard/ui/approvedialog.h"

#include "app-dashboard/core/forwardersclient.h"
#include "app-dashboard/core/timewords.h"
#include "app-dashboard/ui/forwardercard.h"
#include "app-dashboard/ui/plainlabel.h"
#include "common/util/duration.h"

#include <QComboBox>
#include <QDateTime>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>

namespace cloop::dashboard {

ApproveDialog::ApproveDialog(
    ForwardersClient *forwarders, const api::BindingRequest &request, QWidget *parent)
    : FormDialog(tr("Approve request %1").arg(request.id), tr("Approve"), parent)
    , m_forwarders(forwarders)
    , m_request(request)
    , m_ttl(new QComboBox(this))
    , m_executor(new QLineEdit(this))
{
    // Lengths of time in the words the card uses for time left.
    const qint64 askedSeconds = request.ttlSeconds;
    const QString asked = askedSeconds > 0 ? describeDuration(askedSeconds) : request.ttl;
    m_ttl->setEditable(true);
    m_ttl->setObjectName(QStringLiteral("ttl"));
    m_ttl->addItem(tr("as requested (%1)").arg(asked), QString());
    for (const QString &shorter : { QStringLiteral("1h"), QStringLiteral("4h"),
             QStringLiteral("8h"), QStringLiteral("24h") }) {
        const auto seconds = util::parseDuration(shorter);
        if (seconds && seconds->count() < askedSeconds)
            m_ttl->addItem(describeDuration(seconds->count()), shorter);
    }
    m_executor->setObjectName(QStringLiteral("executor"));
    const QString &askedExecutor = request.virtualExecutor;
    m_executor->setPlaceholderText(
        askedExecutor.isEmpty() ? tr("any executor, as requested") : askedExecutor);

    auto *form = new QFormLayout;
    const auto info = [this, form](const QString &label, const QString &text) {
        auto *value = new PlainLabel(text, this);
        value->setWordWrap(true);
        value->setTextInteractionFlags(Qt::TextSelectableByMouse);
        form->addRow(label, value);
    };
    // What an approver must see to decide: what, for whom, why, for how
    // long, on what terms, and how long the request itself waits.
    const QDateTime now = QDateTime::currentDateTimeUtc();
    info(tr("Forwarder:"), request.forwarder);
    if (const QString device = forwarders->model()->deviceWords(request.forwarderId);
        !device.isEmpty())
        info(tr("Device:"), device);
    info(tr("Project:"), request.project);
    info(tr("Asked by:"),
        tr("%1, %2").arg(request.requestedBy, describeMoment(request.createdAt, now)));
    info(tr("Because:"), request.reason);
    info(tr("Asked for:"),
        request.virtualExecutor.isEmpty()
            ? tr("%1, on any executor").arg(asked)
            : tr("%1, on %2 only").arg(asked, request.virtualExecutor));
    if (!request.target.isEmpty() || !request.address.isEmpty())
        info(tr("Sandbox interface:"),
            QStringList { request.target, request.address }.join(QLatin1Char(' ')).trimmed());
    if (request.expiresAt.isValid())
        info(tr("Request expires:"),
            tr("%1 (%2)").arg(
                describeMoment(request.expiresAt, now), describeTimeLeft(request.expiresAt, now)));
    form->addRow(tr("&How long:"), m_ttl);
    form->addRow(tr("&Executor:"), m_executor);
    setContent(form);
    setFormWidth(460);
    connect(m_ttl, &QComboBox::currentTextChanged, this, &ApproveDialog::revalidate);
    connect(m_executor, &QLineEdit::textChanged, this, &ApproveDialog::revalidate);
    revalidate();
}

QString ApproveDialog::ttl() const
{
    const int preset = m_ttl->findText(m_ttl->currentText());
    return preset >= 0 ? m_ttl->itemData(preset).toString() : m_ttl->currentText().trimmed();
}

QString ApproveDialog::problem() const
{
    const QString chosen = ttl();
    if (chosen.isEmpty())
        return {};
    const auto seconds = util::parseDuration(chosen);
    if (!seconds)
        return tr("How long: write a duration such as 4h or 90m, or keep what was requested.");
    if (seconds->count() > m_request.ttlSeconds)
        return tr("An approval may shorten the time asked for, not lengthen it.");
    return {};
}

void ApproveDialog::carryOut(QObject *context, HubApi::Callback done)
{
    m_forwarders->approve(m_request.id, ttl(), m_executor->text(), context, std::move(done));
}

} // namespace cloop::dashboard
