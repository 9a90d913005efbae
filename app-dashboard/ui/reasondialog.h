#pragma once

#include "app-dashboard/ui/formdialog.h"

class QLineEdit;

namespace cloop::dashboard {

// Asks for the reason of a consequential action (Unbind, Revoke), says what
// it will cut, and carries it out.
class ReasonDialog final : public FormDialog
{
    Q_OBJECT

public:
    using Action
        = std::function<void(const QString &reason, QObject *context, HubApi::Callback done)>;

    ReasonDialog(const QString &title, const QString &consequence, const QString &actionText,
        bool reasonRequired, Action action, QWidget *parent = nullptr);

    QLineEdit *reasonEdit() const { return m_reason; }
    QString problem() const override;

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;

private:
    Action m_action;
    bool m_reasonRequired;
    QLineEdit *m_reason;
};

class ForwardersClient;

// Unbind: ends binding `bindingId` (forwarder `forwarder`, project `project`)
// once a reason is given.
ReasonDialog *makeUnbindDialog(ForwardersClient *forwarders, qint64 bindingId,
    const QString &forwarder, const QString &project, QWidget *parent);

} // namespace cloop::dashboard
