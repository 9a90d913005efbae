#pragma once

#include "app-dashboard/core/forwarderdirectory.h"
#include "app-dashboard/ui/formdialog.h"

class QComboBox;
class QLineEdit;

namespace cloop::dashboard {

// Bind…: which project may use the forwarder's device, on which executor,
// for how long, and for a segment under which name and address. Every field
// is checked as it is typed.
class BindDialog final : public FormDialog
{
    Q_OBJECT

public:
    BindDialog(ForwarderDirectory *directory, const QJsonObject &forwarder, QWidget *parent = nullptr);

    // The projects the hub knows, offered in the project box.
    void setProjects(const QStringList &projects);
    BindingTerms terms() const;
    // What is wrong with the fields now, empty when they may be sent.
    QString problem() const override;

    QComboBox *projectBox() const { return m_project; }
    QComboBox *ttlBox() const { return m_ttl; }
    QLineEdit *executorEdit() const { return m_executor; }
    QLineEdit *targetEdit() const { return m_target; }
    QLineEdit *addressEdit() const { return m_address; }

protected:
    void carryOut(QObject *context, HubApi::Callback done) override;

private:

    ForwarderDirectory *m_directory;
    qint64 m_forwarderId;
    bool m_segment;
    QComboBox *m_project;
    QLineEdit *m_executor;
    QComboBox *m_ttl;
    QLineEdit *m_target = nullptr;
    QLineEdit *m_address = nullptr;
};

} // namespace cloop::dashboard
