#pragma once

#include "app-dashboard/ui/enrollmentdialog.h"

#include <QJsonObject>

class QLabel;
class QLineEdit;
class QRadioButton;

namespace cloop::dashboard {

class ForwardersClient;

// + Enroll forwarder: a name and the device (a USB vendor:product[:serial]
// or a network interface), checked as typed; then the single-use command
// for the bench machine, with Copy and how long it stays valid. Opened for
// a forwarder that never redeemed its command, it asks nothing and issues
// a new command in place of the old one (a lost or expired command is the
// common case, and enrolling again under another name would orphan the
// first record).
class EnrollDialog final : public EnrollmentDialog
{
    Q_OBJECT

public:
    explicit EnrollDialog(ForwardersClient *forwarders, QWidget *parent = nullptr);
    // A new command for forwarder `forwarderId`, called `name`.
    EnrollDialog(ForwardersClient *forwarders, qint64 forwarderId, const QString &name,
        QWidget *parent = nullptr);

    QString problem() const override;

    QLineEdit *nameEdit() const { return m_name; }
    QRadioButton *usbChoice() const { return m_usbChoice; }
    QRadioButton *interfaceChoice() const { return m_interfaceChoice; }
    QLineEdit *deviceEdit() const { return m_device; }
    // After a successful enrollment: the command and its validity.
    QLineEdit *commandEdit() const { return commandView()->commandEdit(); }
    QLineEdit *installCommandEdit() const { return commandView()->installCommandEdit(); }
    QLabel *validityLabel() const { return commandView()->validityLabel(); }

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;
    // Shows the command instead of closing.
    void succeeded(const QJsonObject &answer) override;

private:
    ForwardersClient *m_forwarders;
    QLineEdit *m_name;
    QRadioButton *m_usbChoice;
    QRadioButton *m_interfaceChoice;
    QLineEdit *m_device;
};

} // namespace cloop::dashboard
