#include "app-dashboard/ui/forwardercard.h"

#include "common/api/enrolleddaemon.h"
#include "common/protocol/devicespec.h"

#include "app-dashboard/core/forwarderlistmodel.h"
#include "app-dashboard/ui/plainlabel.h"

#include <QDateTime>
#include <QHBoxLayout>
#include <QIcon>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QVBoxLayout>

namespace cloop::dashboard {

QString describeTimeLeft(const QDateTime &until, const QDateTime &now)
{
    const qint64 seconds = now.secsTo(until);
    if (seconds <= 0)
        return ForwarderCard::tr("expired");
    if (seconds < 120)
        return ForwarderCard::tr("%n s left", nullptr, int(seconds));
    const qint64 minutes = seconds / 60;
    if (minutes < 120)
        return ForwarderCard::tr("%n min left", nullptr, int(minutes));
    const qint64 hours = minutes / 60;
    if (hours < 48)
        return ForwarderCard::tr("%1 h %2 min left").arg(hours).arg(minutes % 60);
    return ForwarderCard::tr("%n days left", nullptr, int(hours / 24));
}

ForwarderCard::ForwarderCard(const QPersistentModelIndex &index, QWidget *parent)
    : QFrame(parent)
    , m_index(index)
    , m_forwarderId(index.data(ForwarderListModel::IdRole).toLongLong())
    , m_kindIcon(new QLabel(this))
    , m_nameLabel(new PlainLabel(this))
    , m_stateLabel(new PlainLabel(this))
    , m_deviceLabel(new PlainLabel(this))
    , m_bindingLabel(new PlainLabel(this))
    , m_testLabel(new PlainLabel(this))
    , m_bindButton(new QPushButton(tr("Bind…"), this))
    , m_unbindButton(new QPushButton(tr("Unbind"), this))
    , m_testButton(new QPushButton(tr("Test"), this))
    , m_revokeButton(new QPushButton(tr("Revoke"), this))
{
    setObjectName(QStringLiteral("forwarderCard"));
    setFrameShape(QFrame::StyledPanel);
    setAutoFillBackground(true);
    QFont nameFont = m_nameLabel->font();
    nameFont.setPointSizeF(nameFont.pointSizeF() * 1.2);
    nameFont.setBold(true);
    m_nameLabel->setFont(nameFont);
    m_nameLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_deviceLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_bindingLabel->setWordWrap(true);
    m_testLabel->setWordWrap(true);
    m_testLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);

    auto *title = new QHBoxLayout;
    title->addWidget(m_kindIcon);
    title->addWidget(m_nameLabel);
    title->addStretch();
    title->addWidget(m_stateLabel);

    auto *buttons = new QHBoxLayout;
    buttons->addWidget(m_bindButton);
    buttons->addWidget(m_unbindButton);
    buttons->addWidget(m_testButton);
    buttons->addStretch();
    buttons->addWidget(m_revokeButton);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(title);
    layout->addWidget(m_deviceLabel);
    layout->addWidget(m_bindingLabel);
    layout->addWidget(m_testLabel);
    layout->addLayout(buttons);

    m_bindButton->setIcon(QIcon(QStringLiteral(":/icons/bind.svg")));
    m_unbindButton->setIcon(QIcon(QStringLiteral(":/icons/unbind.svg")));
    m_testButton->setIcon(QIcon(QStringLiteral(":/icons/test.svg")));
    m_revokeButton->setIcon(QIcon(QStringLiteral(":/icons/revoke.svg")));
    connect(
        m_bindButton, &QPushButton::clicked, this, [this] { Q_EMIT bindRequested(m_forwarderId); });
    connect(m_unbindButton, &QPushButton::clicked, this,
        [this] { Q_EMIT unbindRequested(m_forwarderId); });
    connect(
        m_testButton, &QPushButton::clicked, this, [this] { Q_EMIT testRequested(m_forwarderId); });
    connect(m_revokeButton, &QPushButton::clicked, this,
        [this] { Q_EMIT revokeRequested(m_forwarderId); });
    refresh();
}

QString ForwarderCard::stateText() const
{
    return m_stateLabel->text();
}

QString ForwarderCard::bindingText() const
{
    return m_bindingLabel->text();
}

QString ForwarderCard::testText() const
{
    return m_testLabel->text();
}

void ForwarderCard::refresh()
{
    if (!m_index.isValid())
        return;
    const auto value = [this](int role) { return m_index.data(role); };
    using State = api::EnrolledDaemon::State;
    const auto state
        = api::EnrolledDaemon::parseState(value(ForwarderListModel::StateRole).toString());
    const bool connected = value(ForwarderListModel::ConnectedRole).toBool();
    const bool revoked = state == State::Revoked;
    m_nameLabel->setText(value(ForwarderListModel::NameRole).toString());
    const bool usb = protocol::parseDeviceKind(value(ForwarderListModel::KindRole).toString())
        == protocol::DeviceSpec::Kind::Usb;
    m_kindIcon->setPixmap(
        QIcon(usb ? QStringLiteral(":/icons/usb.svg") : QStringLiteral(":/icons/segment.svg"))
            .pixmap(QSize(20, 20)));
    m_kindIcon->setToolTip(usb ? tr("a USB device") : tr("a network segment"));
    const QString deviceName = value(ForwarderListModel::DeviceNameRole).toString();
    m_deviceLabel->setText(deviceName.isEmpty()
            ? value(ForwarderListModel::DeviceRole).toString()
            : QStringLiteral("%1 · %2").arg(
                value(ForwarderListModel::DeviceRole).toString(), deviceName));

    QString stateText;
    if (connected) {
        const QString member = value(ForwarderListModel::HubMemberRole).toString();
        stateText = member.isEmpty() ? tr("● connected") : tr("● connected via %1").arg(member);
        if (value(ForwarderListModel::DeviceUnpluggedRole).toBool())
            stateText += QStringLiteral(" · ") + tr("device unplugged");
    } else if (revoked) {
        stateText = tr("revoked");
    } else if (state == State::AwaitingEnrollment) {
        stateText = tr("waiting for its first connection");
    } else {
        const QDateTime seen = value(ForwarderListModel::LastSeenRole).toDateTime();
        stateText = seen.isValid()
            ? tr("○ offline, last seen %1")
                  .arg(QLocale().toString(seen.toLocalTime(), QLocale::ShortFormat))
            : tr("○ offline");
    }
    m_stateLabel->setText(stateText);
    m_stateLabel->setForegroundRole(connected ? QPalette::Link : QPalette::PlaceholderText);

    const qint64 bindingId = value(ForwarderListModel::BindingIdRole).toLongLong();
    if (bindingId > 0) {
        QStringList parts {
            tr("Bound to %1").arg(value(ForwarderListModel::BindingProjectRole).toString())
        };
        if (const QString executor = value(ForwarderListModel::BindingExecutorRole).toString();
            !executor.isEmpty())
            parts.append(tr("on %1 only").arg(executor));
        const QString target = value(ForwarderListModel::BindingTargetRole).toString();
        const QString address = value(ForwarderListModel::BindingAddressRole).toString();
        if (!target.isEmpty() || !address.isEmpty())
            parts.append(
                tr("as %1").arg(QStringList { target, address }.join(QLatin1Char(' ')).trimmed()));
        parts.append(describeTimeLeft(value(ForwarderListModel::BindingExpiresRole).toDateTime(),
            QDateTime::currentDateTimeUtc()));
        parts.append(tr("by %1").arg(value(ForwarderListModel::BindingCreatedByRole).toString()));
        m_bindingLabel->setText(parts.join(QStringLiteral(" · ")));
    } else {
        m_bindingLabel->setText(revoked ? QString() : tr("Not bound"));
    }
    m_bindingLabel->setVisible(!m_bindingLabel->text().isEmpty());

    const bool testing = value(ForwarderListModel::TestRunningRole).toBool();
    const QString summary = value(ForwarderListModel::TestSummaryRole).toString();
    m_testLabel->setText(testing ? tr("Testing…") : summary);
    m_testLabel->setVisible(testing || !summary.isEmpty());

    m_bindButton->setEnabled(!revoked && bindingId == 0);
    m_unbindButton->setEnabled(bindingId > 0);
    m_testButton->setEnabled(connected && !testing);
    m_testButton->setToolTip(connected
            ? tr("Ask the forwarder what its device shows, without lending it")
            : tr("The forwarder is not connected"));
    m_revokeButton->setEnabled(!revoked);
    // A card of a forwarder that cannot serve now reads as greyed out.
    setEnabled(true);
    QPalette palette = this->palette();
    palette.setColor(QPalette::Window,
        palette.color(connected ? QPalette::Active : QPalette::Disabled, QPalette::Base));
    setPalette(palette);
    m_nameLabel->setEnabled(connected);
    m_deviceLabel->setEnabled(connected);
}

} // namespace cloop::dashboard
